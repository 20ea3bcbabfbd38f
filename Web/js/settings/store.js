// The player's settings document (GET/PATCH /api/v1/settings with its version): applied at
// once on this device, saved in order, and never overwritten silently. A write based on an
// old version comes back 412 with the stored document: the player then chooses theirs or
// mine. Pushes from the player's other devices arrive through the socket's "settings" message.
//
// Events: "change" {settings, source: cache|server|local|remote|saved}, "saved" {version},
// "conflict" {mine, theirs}, "error" {error}.
import { Emitter } from "../app/emitter.js";
import { readJSON, writeJSON } from "../app/storage.js";
import * as api from "../net/api.js";
import { DEFAULT_SETTINGS, clone, merge } from "./defaults.js";

const CACHE_KEY = "retrorapid.settings";

export class SettingsStore extends Emitter {
  document = { settings: clone(DEFAULT_SETTINGS), version: null, updatedAt: null };
  /** Set while a stale write waits for the player's choice: {mine: patch, theirs: document}. */
  conflict = null;
  #chain = Promise.resolve();
  #saving = 0;
  /** Local changes not yet answered by the server, oldest first: an answer to an earlier save
   * must not undo a later change still on its way (the page would jump back a step). */
  #pending = [];

  constructor() {
    super();
    const cached = readJSON(CACHE_KEY);
    // The cached copy paints the page in the player's theme and language before the server answers.
    if (cached?.settings) this.document = { ...cached, settings: merge(DEFAULT_SETTINGS, cached.settings) };
  }

  get settings() {
    return this.document.settings;
  }

  async load() {
    const stored = await api.settings();
    this.#adopt(stored, "server");
    return stored;
  }

  /** Applies `patch` here at once and saves it after any save already under way. */
  update(patch) {
    if (this.conflict) {
      // Wait for the player's choice; this change joins "mine".
      this.conflict.mine = merge(this.conflict.mine, patch);
      this.#setLocal(merge(this.settings, patch));
      return Promise.resolve();
    }
    this.#setLocal(merge(this.settings, patch));
    this.#pending.push(patch);
    this.#chain = this.#chain.then(() => this.#save(patch));
    return this.#chain;
  }

  /** The player keeps what the other device saved. */
  keepTheirs() {
    if (!this.conflict) return;
    const { theirs } = this.conflict;
    this.conflict = null;
    this.#adopt(theirs, "server");
  }

  /** The player keeps their own change, written over the stored version. */
  keepMine() {
    if (!this.conflict) return Promise.resolve();
    const { mine, theirs } = this.conflict;
    this.conflict = null;
    this.document = { ...theirs, settings: merge(theirs.settings, mine) };
    this.emit("change", { settings: this.settings, source: "local" });
    this.#chain = this.#chain.then(() => this.#save(mine));
    return this.#chain;
  }

  /** A document pushed by the server after another device saved it. */
  receiveRemote(document) {
    if (!document?.settings) return;
    if (this.document.version !== null && document.version <= this.document.version) return;
    if (this.#saving > 0 || this.conflict) return;  // our own save's answer settles it
    this.#adopt(document, "remote");
  }

  async #save(patch) {
    this.#saving++;
    try {
      const saved = await api.patchSettings(patch, this.document.version ?? 0);
      // The changes made after this one stay on top of what the server stored.
      const later = this.#pending.slice(this.#pending.indexOf(patch) + 1);
      this.#adopt({ ...saved, settings: later.reduce(merge, saved.settings) }, "saved");
      this.emit("saved", { version: saved.version });
    } catch (error) {
      if (error.code === "stale" && error.body?.current) {
        this.conflict = { mine: patch, theirs: error.body.current };
        this.emit("conflict", { ...this.conflict });
      } else {
        this.emit("error", { error, patch });
        // What the server refused is not kept: show the stored document again.
        await this.load().catch(() => {});
      }
    } finally {
      this.#saving--;
      const index = this.#pending.indexOf(patch);
      if (index >= 0) this.#pending.splice(index, 1);
    }
  }

  #setLocal(settings) {
    this.document = { ...this.document, settings };
    writeJSON(CACHE_KEY, this.document);
    this.emit("change", { settings, source: "local" });
  }

  #adopt(document, source) {
    this.document = { ...document, settings: merge(DEFAULT_SETTINGS, document.settings) };
    writeJSON(CACHE_KEY, this.document);
    this.emit("change", { settings: this.settings, source });
  }
}
