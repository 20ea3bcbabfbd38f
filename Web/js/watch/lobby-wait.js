// A watch link of a race room opened before its race starts (the lobby's "Link to watch the
// race", Web/race.html): the server answers `watch` with game_not_found while the room is in
// its lobby, so the page asks the room's state (GET /api/v1/rooms/{code}) every POLL_MS and
// watches again once the countdown has begun. One request every few seconds per waiting page.
import { roomInfo } from "../net/play-together-api.js";

export const POLL_MS = 1500;

export class LobbyWait {
  #code = null;
  #timer = null;

  get waiting() {
    return this.#code !== null;
  }

  /** Asks whether room `code` is in its lobby: `onLobby()` if so (then `onStart()` once its
   * race begins), `onNotLobby()` otherwise (no such room, or it could not be asked: the
   * server's refusal stands). */
  async check(code, { onLobby, onStart, onNotLobby }) {
    const state = await this.#state(code);
    if (state !== "lobby") {
      onNotLobby();
      return;
    }
    onLobby();
    this.stop();
    this.#code = code;
    const poll = async () => {
      if (this.#code !== code) return;
      const now = await this.#state(code);
      if (this.#code !== code) return;
      if (now === "lobby" || now instanceof Error) {
        this.#timer = setTimeout(poll, POLL_MS);
        return;
      }
      this.stop();
      onStart();  // countdown or racing (or gone: `watch` then says why)
    };
    this.#timer = setTimeout(poll, POLL_MS);
  }

  stop() {
    clearTimeout(this.#timer);
    this.#timer = null;
    this.#code = null;
  }

  /** The room's state, null when no room has the code, an Error when it could not be asked. */
  async #state(code) {
    try {
      return (await roomInfo(code)).state ?? "unknown";
    } catch (error) {
      if (error?.status === 404) return null;
      return error instanceof Error ? error : new Error(String(error));
    }
  }
}
