// The accessibility statement: static text, translated like every page, and the operator's
// address for reports (GET /api/v1/contact), or plain words that none is published.
import { startPage, pageReady } from "../app/page.js";
import { t } from "../app/i18n.js";
import * as api from "../net/api.js";

await startPage();

const link = document.getElementById("contact-link");
const none = document.getElementById("contact-none");

function showContact(address) {
  if (!address) {
    none.hidden = false;
    link.hidden = true;
    return;
  }
  link.href = address;
  // A mail address is shown as itself, so it can be copied; a page or form by what it is for.
  link.textContent = address.toLowerCase().startsWith("mailto:")
    ? t("statement.contactMail", { address: address.slice("mailto:".length).split("?")[0] })
    : t("statement.contactLink");
  link.hidden = false;
  none.hidden = true;
}

let address = null;
try {
  address = (await api.contact()).accessibility;
} catch {
  address = null;  // unreachable server: say none is known rather than show nothing
}
showContact(address);
document.addEventListener("i18n", () => showContact(address));
pageReady();
