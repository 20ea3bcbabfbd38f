// "Share a link to watch" on the play page: while the player's game runs, one button copies
// the absolute address of its watch page (/watch.html?game=ID) to the clipboard and says so
// through the announcer; the link is then shown as text under the road too, for a browser, a
// switch or a gamepad that cannot reach the clipboard. It never takes focus (the road keeps
// it, and the game's keys work wherever focus is), and the link is text, not a field, so the
// arrow keys still steer.
import { t } from "../app/i18n.js";

/** The absolute address that watches game `gameId`. */
export function watchUrl(gameId) {
  return new URL(`/watch.html?game=${encodeURIComponent(gameId)}`, location.origin).href;
}

export class WatchShare {
  #gameId = null;
  #shown = null;  // the words beside the link ("copied" or "copy it yourself"), by key

  /** `root` holds [data-part='share-watch'] (the button) and #watch-link-note with
   * #watch-link-words and #watch-link (the text). */
  constructor(root, { announcer }) {
    this.announcer = announcer;
    this.button = root.querySelector("[data-part='share-watch']");
    this.note = root.querySelector("#watch-link-note");
    this.words = root.querySelector("#watch-link-words");
    this.link = root.querySelector("#watch-link");
    this.button.addEventListener("click", () => this.share());
    document.addEventListener("i18n", () => { if (this.#shown) this.words.textContent = t(this.#shown); });
  }

  get url() {
    return this.#gameId ? watchUrl(this.#gameId) : null;
  }

  /** The game `gameId` runs (started, or taken back): offer its link. */
  show(gameId) {
    if (!gameId) return;
    if (gameId !== this.#gameId) this.#hideNote();
    this.#gameId = gameId;
    this.button.hidden = false;
  }

  /** The game ended: its link would only say so. */
  hide() {
    this.#gameId = null;
    this.button.hidden = true;
    this.#hideNote();
  }

  async share() {
    const gameId = this.#gameId;
    const url = this.url;
    if (!url) return;
    let copied = false;
    try {
      await navigator.clipboard.writeText(url);
      copied = true;
    } catch {
      copied = false;  // no clipboard here (permissions, no user gesture, an old browser)
    }
    if (gameId !== this.#gameId) return;  // the game ended meanwhile
    this.#shown = copied ? "play.watchLinkCopied" : "play.watchLinkNotCopied";
    this.words.textContent = t(this.#shown);
    this.link.textContent = url;
    this.note.hidden = false;
    // The answer to the player's own press: said whether or not game announcements are on.
    this.announcer.say(t(copied ? "play.sayWatchLinkCopied" : "play.sayWatchLinkNotCopied"));
  }

  #hideNote() {
    this.#shown = null;
    this.note.hidden = true;
    this.words.textContent = "";
    this.link.textContent = "";
  }
}
