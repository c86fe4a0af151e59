// Debian's Chromium as the browser tests launch it (the VS Code tier, the apps tier, the host
// bundle's smoke test): headless; as root it needs --no-sandbox; the background-networking
// flags keep it from calling out on a closed network.
export const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-dev-shm-usage',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
  '--disable-quic',
  '--disable-features=Translate,MediaRouter',
];
