// What every page does first: strings, navigation, the player's settings (cached, then from
// the server, then live from other devices), and the socket that carries those pushes. Pages
// get one `context` and add their own behaviour; they mark <html data-ready> when usable.
import { buildNav } from "./nav.js";
import { browserLanguage, currentLanguage, setLanguage, t } from "./i18n.js";
import { Announcer } from "../feedback/announcer.js";
import { SettingsStore } from "../settings/store.js";
import { applyAppearance } from "../settings/appearance.js";
import { GameSocket } from "../net/socket.js";
import { hasToken, newPlayerWait } from "../net/identity.js";
import { RemoteChangeSummary, fieldName } from "./remote-change-summary.js";

export async function startPage() {
  const store = new SettingsStore();
  const announcer = new Announcer(document.getElementById("announcer"));
  const socket = new GameSocket();
  const firstVisit = !hasToken();
  const context = { store, announcer, socket, firstVisit };

  buildNav(document.getElementById("nav-list"));
  applyAppearance(store.settings);
  const cachedLanguage = store.document.version === null ? browserLanguage() : store.settings.language;
  await setLanguage(cachedLanguage);

  const remote = new RemoteChangeSummary((fields) => announcer.say(t("common.settingsFromOtherDevice", {
    fields: fields.map(fieldName).join(", "),
  })));
  let before = store.settings;
  store.on("change", async ({ settings, source }) => {
    const previous = before;
    before = settings;
    applyAppearance(settings);
    if (settings.language !== currentLanguage()) await setLanguage(settings.language);
    if (source === "remote") remote.add(previous, settings);
  });
  socket.on("settings", (message) => store.receiveRemote(message.document));
  // After a reconnect, pushes may have been missed while away: read the stored document again.
  let welcomes = 0;
  socket.on("welcome", () => {
    if (welcomes++ > 0) store.load().catch(() => {});
  });
  document.addEventListener("identity", (event) => {
    if (event.detail?.lost) showPageNotice(t("common.signedOutNotice"), announcer);
  });

  try {
    await store.load();
    if (firstVisit && store.document.version === 0 && cachedLanguage !== store.settings.language) {
      // A brand-new player: their language is the browser's until they choose one.
      await store.update({ language: cachedLanguage });
    }
  } catch (error) {
    if (error.newPlayerLimited) waitForNewPlayer(store, socket, announcer);
    else showPageNotice(t("common.offline", { message: error.message }), announcer);
  }
  socket.connect();
  return context;
}

/** The words for a refused new player, with the wait in whole minutes (at least 1). */
export function newPlayerLimitedText(seconds) {
  return t("common.newPlayersLimited", { minutes: Math.max(1, Math.ceil(seconds / 60)) });
}

/** Too many new players from this network (or on the server): say so and when, keep the page
 * usable on this device's settings, and try again by itself once Retry-After has passed. */
function waitForNewPlayer(store, socket, announcer) {
  showPageNotice(newPlayerLimitedText(newPlayerWait()), announcer);
  setTimeout(async () => {
    try {
      await store.load();
    } catch (error) {
      if (error.newPlayerLimited) waitForNewPlayer(store, socket, announcer);
      return;
    }
    const notice = document.getElementById("page-notice");
    if (notice) notice.hidden = true;
    announcer?.say(t("common.newPlayerJoined"));
    if (!socket.connected) socket.connect();
  }, newPlayerWait() * 1000 + 250);
}

/** A notice at the top of <main> for what concerns the whole page, also spoken. */
export function showPageNotice(text, announcer) {
  const notice = document.getElementById("page-notice");
  if (notice) {
    notice.textContent = text;
    notice.hidden = false;
    notice.tabIndex = -1;  // focusable, so a page can take the player to it
  }
  announcer?.say(text);
}

/** Marks the page usable (tests wait for it). */
export function pageReady() {
  document.documentElement.dataset.ready = "true";
}
