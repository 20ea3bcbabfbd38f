// A minimal event emitter: input managers, the socket and the settings store all speak in
// named semantic events ("move", "settings", …) and never call their listeners' code directly.
export class Emitter {
  #listeners = new Map();

  on(name, listener) {
    if (!this.#listeners.has(name)) this.#listeners.set(name, new Set());
    this.#listeners.get(name).add(listener);
    return () => this.#listeners.get(name)?.delete(listener);
  }

  emit(name, detail) {
    for (const listener of this.#listeners.get(name) ?? []) listener(detail);
  }
}
