// The Settings page's controls for this device's own choices (Web/js/settings/device-prefs.js):
// saved at once on this device, never sent to the server's settings document.
import { bindCheckbox } from "./device-prefs.js";

bindCheckbox(document.getElementById("settings-ghost-audio"), "ghostAudio");
