"""The web fonts: scripts/install-fonts.sh copies them from Debian's fonts-dseg and
fonts-inter, and the server serves them at /fonts (--fonts-path) with their licences. The URLs
come from Web/style.css itself, so the test follows the stylesheet."""

import re
import subprocess

from conftest import REPO

FONT_TYPES = {".ttf": "font/ttf", ".otf": "font/otf", ".woff2": "font/woff2", ".woff": "font/woff"}
LICENCES = ["LICENSE-fonts-dseg.txt", "LICENSE-fonts-inter.txt"]


def css_font_urls() -> list[str]:
    css = (REPO / "Web" / "style.css").read_text()
    return sorted(set(re.findall(r'url\("(/fonts/[^"]+)"\)', css)))


def install_fonts(folder) -> None:
    subprocess.run([str(REPO / "scripts" / "install-fonts.sh"), str(folder)], check=True, timeout=600)


def test_the_stylesheet_names_fonts_under_slash_fonts():
    assert css_font_urls(), "Web/style.css names no url(\"/fonts/...\")"


def test_every_font_the_stylesheet_names_is_served_with_a_font_content_type(tmp_path, server_factory):
    fonts = tmp_path / "fonts"
    install_fonts(fonts)
    install_fonts(fonts)  # idempotent: a second run changes nothing and does not fail
    server = server_factory("--fonts-path", str(fonts))

    for url in css_font_urls():
        reply = server.request("GET", url)
        assert reply.status == 200, url
        suffix = url[url.rfind("."):]
        assert reply.headers["Content-Type"] == FONT_TYPES[suffix], url
        assert reply.body == (fonts / url.removeprefix("/fonts/")).read_bytes(), url

    for licence in LICENCES:
        reply = server.request("GET", "/fonts/" + licence)
        assert reply.status == 200, licence
        assert reply.headers["Content-Type"].startswith("text/plain"), licence
        assert b"License" in reply.body or b"license" in reply.body, licence

    assert server.request("GET", "/fonts/NoSuchFont.ttf").status == 404
    assert "fonts folder not found" not in server.log()


def test_without_the_fonts_folder_the_server_warns_and_serves_no_fonts(tmp_path, server_factory):
    server = server_factory("--fonts-path", str(tmp_path / "no-fonts-here"))
    for url in css_font_urls():
        assert server.request("GET", url).status == 404, url
    assert server.request("GET", "/").status == 200
    assert server.log().count("fonts folder not found") == 1
