// The Settings page's controls for this device's own choices (device-settings.js): checkboxes
// with no `name`, so the page's form handler (Web/js/pages/settings.js), which saves named
// fields to the server, leaves them alone; each saves here at once and says so beside it.
import { t } from "../app/i18n.js";
import { bindCheckbox } from "./device-settings.js";

for (const [id, name] of [["rivalAnnouncements", "rivalAnnouncements"], ["settings-ghost-audio", "ghostAudio"]]) {
  const status = document.getElementById(`${id}-status`);
  bindCheckbox(document.getElementById(id), name, () => { status.textContent = t("settings.deviceSaved"); });
  document.addEventListener("i18n", () => { if (status.textContent) status.textContent = t("settings.deviceSaved"); });
}
