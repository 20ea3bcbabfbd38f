// Unlock: plays left today and when they reset, redeem a code (clear success or error text),
// and order unlimited play at the price due. Paying happens with the payment provider; this
// page only shows the order and checks it.
import { startPage, pageReady } from "../app/page.js";
import { t, formatNumber, formatTime } from "../app/i18n.js";
import * as api from "../net/api.js";

const { socket } = await startPage();
const result = document.getElementById("redeem-result");
const orderStatus = document.getElementById("order-status");
const buyButton = document.getElementById("buy");
const checkButton = document.getElementById("check-order");
const codeInput = document.getElementById("redeem-code");
let orderId = null;

async function showPlays() {
  const [quota, me] = await Promise.all([api.quota(), api.me()]);
  document.getElementById("plays-summary").textContent = quota.unlimited || me.entitlements.unlimited
    ? t("unlock.unlimitedNow")
    : t("unlock.playsLeft", { left: formatNumber(quota.playsLeft), total: formatNumber(quota.dailyFreePlays) });
  document.getElementById("plays-reset").textContent = quota.unlimited ? "" : t("unlock.resetsAt", { time: formatTime(quota.resetsAt) });
  buyButton.disabled = me.entitlements.unlimited;
  return me;
}

async function showPrice() {
  const price = await api.price();
  document.getElementById("price-line").textContent = price.discountCode
    ? t("unlock.priceDiscounted", { price: price.amount.display, base: price.base.display, code: price.discountCode, until: formatTime(price.discountExpiresAt) })
    : t("unlock.price", { price: price.amount.display });
}

function fail(element, error, input) {
  element.className = "message bad";
  element.textContent = error.message;
  if (input) input.setAttribute("aria-invalid", "true");
}

document.getElementById("redeem-form").addEventListener("submit", async (event) => {
  event.preventDefault();
  const code = codeInput.value.trim();
  if (!code) {
    fail(result, { message: t("unlock.codeEmpty") }, codeInput);
    codeInput.focus();
    return;
  }
  result.className = "message";
  result.textContent = t("unlock.redeeming");
  try {
    const redemption = await api.redeemCode(code);
    codeInput.removeAttribute("aria-invalid");
    result.className = "message good";
    result.textContent = redemption.kind === "unlock" || redemption.unlimited
      ? t("unlock.unlocked", { code: redemption.code })
      : t("unlock.discounted", { code: redemption.code, price: redemption.price.amount.display });
    codeInput.value = "";
    await Promise.all([showPlays(), showPrice()]);
  } catch (error) {
    const known = { not_found: "unlock.codeUnknown", expired: "unlock.codeExpired", conflict: "unlock.codeUsed" }[error.code];
    fail(result, known ? { message: t(known, { message: error.message }) } : error, codeInput);
    codeInput.focus();
  }
});

async function checkOrder() {
  if (!orderId) return;
  const order = await api.order(orderId);
  orderStatus.className = order.status === "paid" ? "message good" : "message";
  orderStatus.textContent = order.status === "paid"
    ? t("unlock.orderPaid", { price: order.amount.display })
    : t("unlock.orderPending", { id: order.id, price: order.amount.display });
  if (order.status === "paid") {
    checkButton.hidden = true;
    await showPlays();
  }
}

buyButton.addEventListener("click", async () => {
  try {
    const order = await api.createOrder();
    orderId = order.id;
    checkButton.hidden = false;
    await checkOrder();
  } catch (error) {
    fail(orderStatus, error);
  }
});
checkButton.addEventListener("click", () => checkOrder().catch((error) => fail(orderStatus, error)));
socket.on("welcome", () => showPlays().catch(() => {}));
document.addEventListener("i18n", () => Promise.all([showPlays(), showPrice()]).catch(() => {}));

try {
  await Promise.all([showPlays(), showPrice()]);
} catch (error) {
  fail(orderStatus, error);
}
pageReady();
