// The Settings page's control for the device-local race preference (race-settings.js): a
// checkbox with no `name`, so the page's own form handler (Web/js/pages/settings.js), which
// saves named fields to the server, leaves it alone; it saves here and says so beside it.
import { t } from "../app/i18n.js";
import { RaceSettings } from "./race-settings.js";

const settings = new RaceSettings();
const box = document.getElementById("rivalAnnouncements");
const status = document.getElementById("rivalAnnouncements-status");

function render() {
  box.checked = settings.settings.rivalAnnouncements;
}

if (box) {
  render();
  settings.on("change", render);
  box.addEventListener("change", () => {
    settings.update({ rivalAnnouncements: box.checked });
    status.textContent = t("race.settingSaved");
  });
  document.addEventListener("i18n", () => { if (status.textContent) status.textContent = t("race.settingSaved"); });
}
