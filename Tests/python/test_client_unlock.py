"""The Unlock page buying unlimited play in headless Chromium: Buy → the payment provider's
hosted page (the local stand-in, payment_provider_standin.py) → Pay → back on our page, which
shows what the server says once the provider's signed webhook arrived. Also: leaving the
provider's page without paying, the pending order after a reload and cancelling it, the
webhook arriving late, and a server that sells nothing. axe (WCAG 2.2 AA) on every state."""

import pytest

from conftest import free_port
from payment_provider_standin import PaymentProviderStandIn
from test_client_support import (browser, describe_violations, device_token, open_page, reset_zoom,  # noqa: F401
                                 run_axe, screenshot, wait_for, zoom, browser_errors)

KEY, WEBHOOK_SECRET = "sk_test_browser_4eC39HqLyjWD", "whsec_browser_standin"


@pytest.fixture
def standin():
    provider = PaymentProviderStandIn(KEY, WEBHOOK_SECRET).start()
    yield provider
    provider.stop()


@pytest.fixture
def shop(server_factory, standin):
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    standin.webhook_url = base + "/api/v1/payments/webhook"
    return server_factory("--payment-provider-url", standin.url, "--payment-secret-key", KEY,
                          "--webhook-secret", WEBHOOK_SECRET, "--public-base-url", base, port=port)


def text(driver, element_id):
    return driver.execute_script(f"return document.getElementById('{element_id}').textContent")


def no_violations(driver, where):
    violations = run_axe(driver)
    assert violations == [], f"{where}: {describe_violations(violations)}"


def buy_and_reach_the_provider(driver, shop, standin):
    open_page(driver, shop.base_url, "/unlock.html")
    wait_for(driver, "!document.getElementById('buy-offer').hidden")
    assert driver.find_element("id", "buy-unavailable").is_displayed() is False
    driver.find_element("id", "buy").click()
    wait_for(driver, f"location.href.startsWith('{standin.url}/c/pay/cs_test_')")
    wait_for(driver, "document.readyState === 'complete' && !!document.getElementById('pay')")


def test_buying_goes_to_the_providers_page_and_comes_back_with_unlimited_play(shop, standin, browser):
    open_page(browser, shop.base_url, "/unlock.html")
    wait_for(browser, "!document.getElementById('buy-offer').hidden")
    no_violations(browser, "unlock page, selling")
    buy_and_reach_the_provider(browser, shop, standin)
    assert browser.find_element("css selector", "h1").text == "Pay for RetroRapid unlimited play"
    no_violations(browser, "the stand-in's checkout page")
    screenshot(browser, "unlock-provider-page")

    browser.find_element("id", "pay").click()
    wait_for(browser, f"location.href.startsWith('{shop.base_url}/unlock.html')")
    wait_for(browser, "document.getElementById('order-status')?.textContent.startsWith('Payment of £2.99 received')")
    # The outcome has focus and sits in the polite status region; the query is gone, so a
    # reload does not replay it.
    assert browser.execute_script("return document.activeElement.id") == "order-status"
    assert browser.find_element("id", "order-status").get_attribute("role") == "status"
    assert browser.execute_script("return location.search") == ""
    wait_for(browser, "document.getElementById('plays-summary').textContent === 'You have unlimited play.'")
    assert not browser.find_element("id", "buy").is_displayed()
    assert "paid" in text(browser, "order-list")
    me = shop.request("GET", "/api/v1/me", token=device_token(browser)).json()
    assert me["entitlements"]["unlimited"] is True
    no_violations(browser, "unlock page, paid")
    screenshot(browser, "unlock-paid")
    assert browser_errors(browser) == []


def test_leaving_the_providers_page_keeps_the_order_which_a_reload_shows_and_which_can_be_cancelled(shop, standin, browser):
    buy_and_reach_the_provider(browser, shop, standin)
    checkout_url = browser.current_url
    browser.find_element("id", "cancel").click()
    wait_for(browser, "document.getElementById('order-status')?.textContent.startsWith('You left the payment page without paying')")
    assert browser.execute_script("return document.activeElement.id") == "order-status"

    browser.refresh()
    wait_for(browser, "document.documentElement.dataset.ready === 'true' && !document.getElementById('orders-section').hidden")
    item = browser.find_element("css selector", "#order-list li")
    assert "waiting for payment" in item.text
    pay = item.find_element("css selector", "a.button")
    assert pay.text == "Go to payment" and pay.get_attribute("href") == checkout_url
    assert pay.size["height"] >= 44 and pay.size["width"] >= 44
    no_violations(browser, "unlock page, a pending order")

    # At phone width and 200 % text the order and its two actions stay usable.
    zoom(browser, 2.0, width=390, height=844)
    wait_for(browser, "document.documentElement.scrollWidth <= document.documentElement.clientWidth + 1")
    no_violations(browser, "unlock page, pending order, phone at 200 %")
    browser.execute_script("document.querySelector('#order-list li').scrollIntoView()")
    screenshot(browser, "unlock-pending-phone-200")
    reset_zoom(browser)

    cancel = item.find_element("css selector", "button")
    assert cancel.text == "Cancel order"
    cancel.click()
    wait_for(browser, "document.getElementById('order-status')?.textContent.startsWith('Order for £2.99 cancelled')")
    assert browser.execute_script("return document.activeElement.id") == "orders-heading"
    assert "cancelled" in text(browser, "order-list")
    assert browser.find_elements("css selector", "#order-list a.button") == []
    assert browser.find_element("id", "buy").is_displayed()  # buying again is still offered
    orders = shop.request("GET", "/api/v1/orders", token=device_token(browser)).json()["orders"]
    assert [o["status"] for o in orders] == ["cancelled"]
    no_violations(browser, "unlock page, cancelled order")


def test_a_webhook_that_arrives_after_the_player_is_shown_as_waiting_then_paid(shop, standin, browser):
    standin.deliver_webhooks = False
    buy_and_reach_the_provider(browser, shop, standin)
    session_id = browser.current_url.rsplit("/", 1)[1]
    browser.find_element("id", "pay").click()
    wait_for(browser, "document.getElementById('order-status')?.textContent.includes('Waiting for the payment provider to confirm')")
    assert "unlimited" not in text(browser, "plays-summary")
    assert standin.send_completed(session_id)[0] == 200
    wait_for(browser, "document.getElementById('order-status')?.textContent.startsWith('Payment of £2.99 received')")
    wait_for(browser, "document.getElementById('plays-summary').textContent === 'You have unlimited play.'")


def test_a_server_without_a_payment_provider_says_it_sells_nothing(server, browser):
    open_page(browser, server.base_url, "/unlock.html")
    wait_for(browser, "!document.getElementById('buy-unavailable').hidden")
    notice = browser.find_element("id", "buy-unavailable").text
    assert "does not sell" in notice and "code" in notice
    assert not browser.find_element("id", "buy").is_displayed()
    no_violations(browser, "unlock page, selling nothing")
    screenshot(browser, "unlock-sells-nothing")


def test_a_provider_that_refuses_is_explained_and_focus_stays_on_buy(server_factory, standin, browser):
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    shop = server_factory("--payment-provider-url", standin.url, "--payment-secret-key", "sk_test_not_the_right_key",
                          "--webhook-secret", WEBHOOK_SECRET, "--public-base-url", base, port=port)
    open_page(browser, shop.base_url, "/unlock.html")
    wait_for(browser, "!document.getElementById('buy-offer').hidden")
    buy = browser.find_element("id", "buy")
    buy.click()
    wait_for(browser, "document.getElementById('order-status').className.includes('bad')")
    message = text(browser, "order-status")
    assert message.startswith("The payment page could not be opened") and "payment key was refused" in message
    assert browser.execute_script("return document.activeElement.id") == "buy"
    assert browser.execute_script("return location.pathname") == "/unlock.html"
    assert browser.find_element("id", "orders-section").is_displayed() is False
    no_violations(browser, "unlock page, provider refused")
