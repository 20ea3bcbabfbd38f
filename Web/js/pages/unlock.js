// Unlock: plays left today and when they reset, redeem a code (clear success or error text),
// and buy unlimited play. Buying opens the payment provider's hosted checkout (docs/API.md,
// "Paying through a hosted checkout"): this page sends the browser there, and the provider
// sends it back here with ?order=…&checkout=success|cancelled. Only the provider's signed
// webhook to the server pays an order, so coming back shows what the server says, waiting a
// little for the webhook if needed. A server without a provider sells nothing and says so.
import { startPage, pageReady } from "../app/page.js";
import { t, formatNumber, formatTime } from "../app/i18n.js";
import * as api from "../net/api.js";

const { socket } = await startPage();
const result = document.getElementById("redeem-result");
const orderStatus = document.getElementById("order-status");
const buyOffer = document.getElementById("buy-offer");
const buyUnavailable = document.getElementById("buy-unavailable");
const buyButton = document.getElementById("buy");
const checkButton = document.getElementById("check-order");
const codeInput = document.getElementById("redeem-code");
const ordersSection = document.getElementById("orders-section");
const orderList = document.getElementById("order-list");
// How long a return from the provider waits for its webhook before saying "not yet".
const CONFIRM_POLLS = 20;
const CONFIRM_EVERY_MS = 1000;
let unlimited = false;
let purchasable = false;
let returnedOrder = null;  // the order the provider sent the player back with

async function showPlays() {
  const [quota, me] = await Promise.all([api.quota(), api.me()]);
  unlimited = Boolean(me.entitlements.unlimited);
  document.getElementById("plays-summary").textContent = quota.unlimited || unlimited
    ? t("unlock.unlimitedNow")
    : t("unlock.playsLeft", { left: formatNumber(quota.playsLeft), total: formatNumber(quota.dailyFreePlays) });
  document.getElementById("plays-reset").textContent = quota.unlimited ? "" : t("unlock.resetsAt", { time: formatTime(quota.resetsAt) });
  showOffer();
  return me;
}

async function showPrice() {
  const price = await api.price();
  purchasable = Boolean(price.purchasable);
  document.getElementById("price-line").textContent = price.discountCode
    ? t("unlock.priceDiscounted", { price: price.amount.display, base: price.base.display, code: price.discountCode, until: formatTime(price.discountExpiresAt) })
    : t("unlock.price", { price: price.amount.display });
  showOffer();
}

/** The buy button only when this server sells and the player has something to buy. */
function showOffer() {
  buyOffer.hidden = !purchasable || unlimited;
  buyUnavailable.hidden = purchasable || unlimited;
}

function fail(element, error, input) {
  element.className = "message bad";
  element.textContent = error.message;
  if (input) input.setAttribute("aria-invalid", "true");
}

function say(element, text, kind = "") {
  element.className = kind ? `message ${kind}` : "message";
  element.textContent = text;
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

// MARK: - Orders

function orderLine(order) {
  const price = order.amount.display;
  switch (order.status) {
    case "paid": return t("unlock.orderLinePaid", { price, time: formatTime(order.paidAt) });
    case "cancelled": return t("unlock.orderLineCancelled", { price, time: formatTime(order.createdAt) });
    default: return order.checkoutUrl
      ? t("unlock.orderLinePending", { price, time: formatTime(order.createdAt) })
      : t("unlock.orderLineExpired", { price, time: formatTime(order.createdAt) });
  }
}

/** Every order, newest first; a pending one with its way back to pay, and a way to cancel. */
async function showOrders() {
  const { orders } = await api.orders();
  orderList.replaceChildren(...orders.map((order) => {
    const item = document.createElement("li");
    item.dataset.order = order.id;
    const line = document.createElement("p");
    line.id = `order-line-${order.id}`;
    line.textContent = orderLine(order);
    item.append(line);
    if (order.status === "pending") {
      const actions = document.createElement("div");
      actions.className = "actions";
      if (order.checkoutUrl) {
        const pay = document.createElement("a");
        pay.className = "button primary";
        pay.href = order.checkoutUrl;
        pay.textContent = t("unlock.payOrder");
        pay.setAttribute("aria-describedby", line.id);
        actions.append(pay);
      }
      const cancel = document.createElement("button");
      cancel.type = "button";
      cancel.textContent = t("unlock.cancelOrder");
      cancel.setAttribute("aria-describedby", line.id);
      cancel.addEventListener("click", () => cancelOrder(order, cancel));
      actions.append(cancel);
      item.append(actions);
    }
    return item;
  }));
  ordersSection.hidden = orders.length === 0;
  return orders;
}

// Buttons busy with a request ignore further presses rather than being disabled: disabling the
// focused button would drop keyboard focus to the page.
const busy = new WeakSet();

async function cancelOrder(order, button) {
  if (busy.has(button)) return;
  busy.add(button);
  try {
    await api.cancelOrder(order.id);
    say(orderStatus, t("unlock.orderCancelled", { price: order.amount.display }), "good");
    await showOrders();
    // The button is gone: the list's heading is where the player was.
    document.getElementById("orders-heading").focus();
  } catch (error) {
    fail(orderStatus, error);
  } finally {
    busy.delete(button);
  }
}

buyButton.addEventListener("click", async () => {
  if (busy.has(buyButton)) return;
  busy.add(buyButton);
  say(orderStatus, t("unlock.buyOpening"));
  try {
    const order = await api.createOrder();
    if (!order.checkoutUrl) throw new Error(t("unlock.noCheckout"));
    window.location.assign(order.checkoutUrl);
  } catch (error) {
    busy.delete(buyButton);
    fail(orderStatus, { message: t("unlock.buyFailed", { message: error.message }) });
    if (error.code === "payments_unavailable") {
      purchasable = false;
      showOffer();
      buyUnavailable.focus();
    }
  }
});

/** What the server says of the order the provider sent the player back with. */
async function showReturn(id, outcome, { polls = CONFIRM_POLLS } = {}) {
  const order = await api.order(id);
  const price = order.amount.display;
  if (order.status === "paid") {
    say(orderStatus, t("unlock.orderPaid", { price }), "good");
    checkButton.hidden = true;
    await Promise.all([showPlays(), showOrders()]);
    return order;
  }
  if (order.status === "cancelled") {
    say(orderStatus, t("unlock.returnOrderCancelled", { price }));
    checkButton.hidden = true;
    return order;
  }
  if (outcome === "cancelled") {
    say(orderStatus, t("unlock.returnCancelled", { price }));
    checkButton.hidden = true;
    return order;
  }
  // Back from paying, but the provider's webhook has not reached the server yet.
  if (polls > 0) {
    say(orderStatus, t("unlock.returnConfirming", { price }));
    await new Promise((resolve) => setTimeout(resolve, CONFIRM_EVERY_MS));
    return showReturn(id, outcome, { polls: polls - 1 });
  }
  say(orderStatus, t("unlock.returnNotYet", { price }));
  checkButton.hidden = false;
  return order;
}

checkButton.addEventListener("click", () => {
  if (!returnedOrder) return;
  showReturn(returnedOrder, "success", { polls: 0 }).catch((error) => fail(orderStatus, error));
});
socket.on("welcome", () => showPlays().catch(() => {}));
document.addEventListener("i18n", () => Promise.all([showPlays(), showPrice(), showOrders()]).catch(() => {}));

try {
  await Promise.all([showPlays(), showPrice(), showOrders()]);
} catch (error) {
  fail(orderStatus, error);
}
pageReady();

const query = new URLSearchParams(window.location.search);
if (query.get("order") && ["success", "cancelled"].includes(query.get("checkout"))) {
  returnedOrder = query.get("order");
  const outcome = query.get("checkout");
  // A reload shows the orders as they are, not this return again.
  history.replaceState(null, "", window.location.pathname);
  // The outcome is what the player came back for: it is said (role=status) and has focus.
  say(orderStatus, t("unlock.returnChecking"));
  orderStatus.focus();
  showReturn(returnedOrder, outcome).catch((error) => fail(orderStatus, error));
}
