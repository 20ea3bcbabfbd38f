"""The accessibility statement's "Tell us" is a real way to reach the operator: the address set
with --accessibility-contact (an https:// page or form, or a mailto: address) is a link on the
page and in GET /api/v1/contact; without one the page says plainly that none is published; an
address of any other kind is refused at start."""

import json
import subprocess
from pathlib import Path

import os
import pytest

from conftest import REPO
from test_client_support import browser, open_page, run_axe, describe_violations, wait_for  # noqa: F401

EN = json.loads((REPO / "Web/i18n/en.json").read_text())


@pytest.mark.parametrize("address, text", [
    ("https://example.org/accessibility-feedback", EN["statement"]["contactLink"]),
    ("mailto:access@example.org", EN["statement"]["contactMail"].format(address="access@example.org")),
])
def test_the_operators_contact_is_a_link_under_tell_us(server_factory, browser, address, text):
    server = server_factory("--accessibility-contact", address)
    reply = server.request("GET", "/api/v1/contact")
    assert reply.status == 200 and reply.json() == {"accessibility": address}
    open_page(browser, server.base_url, "/accessibility.html")
    wait_for(browser, "!document.getElementById('contact-link').hidden")
    link = browser.find_element("id", "contact-link")
    assert link.get_attribute("href") == address and link.text == text
    assert link.find_element("xpath", "ancestor::section").get_attribute("aria-labelledby") == "s-feedback"
    assert not browser.find_element("id", "contact-none").is_displayed()
    assert run_axe(browser) == [], describe_violations(run_axe(browser))


def test_without_a_contact_the_statement_says_none_is_published(server, browser):
    assert server.request("GET", "/api/v1/contact").json() == {"accessibility": None}
    open_page(browser, server.base_url, "/accessibility.html")
    wait_for(browser, "!document.getElementById('contact-none').hidden")
    assert browser.find_element("id", "contact-none").text == EN["statement"]["noContact"]
    assert not browser.find_element("id", "contact-link").is_displayed()


@pytest.mark.parametrize("address", ["javascript:alert(1)", "http://example.org/a11y", "https://", "mailto:nobody",
                                     "https://example.org/a b", "ftp://example.org"])
def test_any_other_kind_of_address_is_refused_at_start(tmp_path, address):
    binary = str(Path(os.environ.get("RETRORAPID_BINARY", REPO / ".build/debug/retrorapid")).resolve())
    result = subprocess.run([binary, "serve", "--port", "0", "--database-path", str(tmp_path / "db.sqlite"),
                             "--web-root", str(REPO / "Web"), "--migrations-path", str(REPO / "Migrations"),
                             "--accessibility-contact", address],
                            cwd=tmp_path, capture_output=True, text=True, timeout=30)
    output = result.stdout + result.stderr
    assert result.returncode != 0, output
    assert "accessibility-contact" in output and "https://" in output, output
    assert not (tmp_path / "db.sqlite").exists()  # refused before anything was created
