// How a prompt is titled: the spec requires showing which server asks, so a title that does
// not name the server already gets it as a prefix.

export function promptTitle(title: string, server: string | undefined): string {
  const t = title.trim();
  if (!server) return t;
  if (t.toLowerCase().includes(server.toLowerCase())) return t;
  return t ? `${server}: ${t}` : server;
}
