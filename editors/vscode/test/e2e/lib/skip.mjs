// Thrown by a scenario whose feature is not in this sidecar yet: reported as skipped, not failed.
export class Skip extends Error {
  constructor(reason) {
    super(reason);
    this.skip = true;
  }
}
