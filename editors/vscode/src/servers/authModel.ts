// Sign-in as the server list and the Sign In / Sign Out commands show it. Pure.
//
// Only http servers sign in (the sidecar refuses the others). Sign In is offered for one that
// needs it (`needsAuth`) or is not signed in; Sign Out for one that is. What is shown of a
// sign-in is the authorization server's host, the scopes and the expiry: never a token (the
// sidecar sends none).

import type { AuthSummary, ServerSummary } from '../contract';

export function canSignIn(s: ServerSummary): boolean {
  return s.transport === 'http' && (s.state === 'needsAuth' || !s.auth?.signedIn);
}

export function canSignOut(s: ServerSummary): boolean {
  return s.transport === 'http' && s.auth?.signedIn === true;
}

/** The servers "Sign In to Server" offers: those that need a sign-in first, then by name. */
export function signInCandidates(servers: ServerSummary[]): ServerSummary[] {
  const needs = (s: ServerSummary) => (s.state === 'needsAuth' ? 0 : 1);
  return servers.filter(canSignIn).sort((a, b) => needs(a) - needs(b) || a.name.localeCompare(b.name));
}

export function signOutCandidates(servers: ServerSummary[]): ServerSummary[] {
  return servers.filter(canSignOut).sort((a, b) => a.name.localeCompare(b.name));
}

/** The host of an issuer URL (`https://auth.example.com/tenant` → `auth.example.com`). */
export function issuerHost(issuer: string): string {
  try {
    return new URL(issuer).host || issuer;
  } catch {
    return issuer;
  }
}

/** "5 min", "2 h 5 min", "3 days": a coarse, readable duration. */
export function roughDuration(seconds: number): string {
  const s = Math.max(0, Math.round(seconds));
  if (s < 60) return `${s} s`;
  const min = Math.round(s / 60);
  if (min < 60) return `${min} min`;
  const h = Math.floor(min / 60);
  if (h < 48) return min % 60 ? `${h} h ${min % 60} min` : `${h} h`;
  return `${Math.round(h / 24)} days`;
}

/**
 * One line about a server's sign-in, e.g. "signed in at auth.example.com · read, write · expires
 * in 42 min"; undefined for a server that does not use OAuth. `now` in seconds since the epoch.
 */
export function describeAuth(auth: AuthSummary | undefined, now: number): string | undefined {
  if (!auth) return undefined;
  const at = auth.issuer ? ` at ${issuerHost(auth.issuer)}` : '';
  if (!auth.signedIn) return `not signed in${at}`;
  const parts = [`signed in${at}`];
  if (auth.scopes?.length) parts.push(auth.scopes.join(', '));
  if (auth.expiresAt !== undefined) {
    const left = auth.expiresAt - now;
    // An expired access token is refreshed on the next request: not an error.
    parts.push(left > 0 ? `expires in ${roughDuration(left)}` : `token expired ${roughDuration(-left)} ago (refreshed on use)`);
  }
  return parts.join(' · ');
}
