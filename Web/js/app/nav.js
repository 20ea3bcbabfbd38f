// The navigation every page shares, from one list, with the current page marked by
// aria-current (and by a border and bold text, not colour alone). The replay page is not in it:
// a replay needs a game, chosen on the leaderboards or in your recent games.
const PAGES = [
  { href: "/", key: "nav.play" },
  { href: "/race.html", key: "race.nav" },
  { href: "/watch.html", key: "watch.nav" },
  { href: "/tutorial.html", key: "nav.tutorial" },
  { href: "/settings.html", key: "nav.settings" },
  { href: "/leaderboards.html", key: "nav.leaderboards" },
  { href: "/unlock.html", key: "nav.unlock" },
  { href: "/devices.html", key: "nav.devices" },
  { href: "/accessibility.html", key: "nav.accessibility" },
];

export function buildNav(list) {
  const here = location.pathname === "/index.html" ? "/" : location.pathname;
  list.replaceChildren(...PAGES.map(({ href, key }) => {
    const item = document.createElement("li");
    const link = document.createElement("a");
    link.href = href;
    link.dataset.i18n = key;
    if (href === here) link.setAttribute("aria-current", "page");
    item.append(link);
    return item;
  }));
}
