// Devices: the display name, a link code to show another device, a code from another device
// to join its player, and the list of this player's devices with "sign out" for each.
import { startPage, pageReady } from "../app/page.js";
import { t, formatTime } from "../app/i18n.js";
import * as api from "../net/api.js";
import { deviceLabel } from "../net/identity.js";

const { store, socket } = await startPage();
const nameInput = document.getElementById("display-name");
const nameResult = document.getElementById("name-result");
const claimInput = document.getElementById("claim-code");
const claimResult = document.getElementById("claim-result");
const deviceResult = document.getElementById("device-result");

function say(element, text, kind = "") {
  element.className = kind ? `message ${kind}` : "message";
  element.textContent = text;
}

async function showMe() {
  const me = await api.me();
  nameInput.value = me.player.displayName;
}

/** The signed-in devices (the API lists signed-out ones too; they can do nothing any more). */
async function showDevices() {
  const { devices } = await api.devices();
  const body = document.querySelector("#device-table tbody");
  body.replaceChildren(...devices.filter((device) => !device.revokedAt).map((device) => {
    const tr = document.createElement("tr");
    const cells = [
      device.current ? t("devices.thisDevice", { label: device.label }) : device.label,
      formatTime(device.createdAt),
      formatTime(device.lastSeenAt),
      t("devices.active"),
    ];
    for (const text of cells) {
      const td = document.createElement("td");
      td.textContent = text;
      tr.append(td);
    }
    const action = document.createElement("td");
    const button = document.createElement("button");
    button.type = "button";
    button.textContent = t("devices.signOut");
    button.setAttribute("aria-label", t("devices.signOutNamed", { label: device.label }));
    button.addEventListener("click", () => revoke(device));
    action.append(button);
    tr.append(action);
    return tr;
  }));
}

async function revoke(device) {
  if (device.current && !window.confirm(t("devices.confirmSelf"))) return;
  try {
    await api.revokeDevice(device.id);
    say(deviceResult, t("devices.signedOut", { label: device.label }), "good");
    if (device.current) {
      location.reload();  // this browser's token is gone: start afresh
      return;
    }
    await showDevices();
    // The pressed button went with its row: focus goes to the list's heading, and the status
    // line under the list says what happened.
    document.getElementById("list-heading").focus();
  } catch (error) {
    say(deviceResult, error.code === "conflict" ? t("devices.lastDevice") : error.message, "bad");
  }
}

document.getElementById("name-form").addEventListener("submit", async (event) => {
  event.preventDefault();
  try {
    const me = await api.setDisplayName(nameInput.value.trim());
    nameInput.removeAttribute("aria-invalid");
    say(nameResult, t("devices.nameSaved", { name: me.player.displayName }), "good");
  } catch (error) {
    nameInput.setAttribute("aria-invalid", "true");
    say(nameResult, error.message, "bad");
    nameInput.focus();
  }
});

document.getElementById("make-code").addEventListener("click", async () => {
  try {
    const code = await api.createLinkCode();
    document.getElementById("link-code").textContent = code.code;
    document.getElementById("code-expiry").textContent = t("devices.codeExpires", { time: formatTime(code.expiresAt) });
    document.getElementById("code-box").hidden = false;
    say(document.getElementById("make-code-result"), t("devices.codeMade", { code: code.code.split("").join(" ") }), "good");
  } catch (error) {
    say(document.getElementById("make-code-result"), error.message, "bad");
  }
});

document.getElementById("claim-form").addEventListener("submit", async (event) => {
  event.preventDefault();
  const code = claimInput.value.trim();
  if (!code) {
    claimInput.setAttribute("aria-invalid", "true");
    say(claimResult, t("devices.codeEmpty"), "bad");
    claimInput.focus();
    return;
  }
  try {
    const signedIn = await api.claimLinkCode(code, deviceLabel());
    claimInput.removeAttribute("aria-invalid");
    claimInput.value = "";
    say(claimResult, t("devices.joined", { name: signedIn.player.displayName }), "good");
    // Now signed in as that player: their settings, their devices, their socket.
    socket.close();
    socket.connect();
    await Promise.all([store.load(), showMe(), showDevices()]);
  } catch (error) {
    claimInput.setAttribute("aria-invalid", "true");
    const known = { not_found: "devices.codeUnknown", expired: "devices.codeExpired", rate_limited: "devices.codeRateLimited" }[error.code];
    say(claimResult, known ? t(known) : error.message, "bad");
    claimInput.focus();
  }
});

document.addEventListener("i18n", () => showDevices().catch(() => {}));
try {
  await Promise.all([showMe(), showDevices()]);
} catch (error) {
  say(deviceResult, error.message, "bad");
}
pageReady();
