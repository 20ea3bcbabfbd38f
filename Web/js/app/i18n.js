// Every visible string comes from /i18n/<lang>.json. Markup names its strings with
// data-i18n="key" (text) and data-i18n-attr="attribute:key;…" (attributes); code asks t().
const SUPPORTED = ["en", "es"];
const cache = new Map();
let strings = {};
let language = "en";

export function supported(lang) {
  return SUPPORTED.includes(lang);
}

/** The language before the player's settings arrive: the browser's, if we have it. */
export function browserLanguage() {
  for (const tag of navigator.languages ?? [navigator.language]) {
    const base = String(tag).slice(0, 2).toLowerCase();
    if (supported(base)) return base;
  }
  return "en";
}

async function load(lang) {
  if (!cache.has(lang)) {
    cache.set(lang, fetch(`/i18n/${lang}.json`, { cache: "no-cache" }).then((reply) => {
      if (!reply.ok) throw new Error(`strings for ${lang}: HTTP ${reply.status}`);
      return reply.json();
    }));
  }
  return cache.get(lang);
}

function lookup(table, key) {
  return key.split(".").reduce((node, part) => (node == null ? undefined : node[part]), table);
}

/** The string for `key` with {name} placeholders filled; the key itself if missing, so a gap shows. */
export function t(key, values = {}) {
  const text = lookup(strings, key);
  if (typeof text !== "string") return key;
  return text.replace(/\{(\w+)\}/g, (whole, name) => (name in values ? String(values[name]) : whole));
}

/** Whether any strings are in yet: markup made before that waits for setLanguage's pass. */
export function stringsLoaded() {
  return Object.keys(strings).length > 0;
}

export function currentLanguage() {
  return language;
}

/** Switches language and re-translates the page (and anything listening for "i18n"). */
export async function setLanguage(lang) {
  const wanted = supported(lang) ? lang : "en";
  strings = await load(wanted);
  language = wanted;
  document.documentElement.lang = wanted;
  translate(document);
  document.dispatchEvent(new CustomEvent("i18n", { detail: { language: wanted } }));
}

/** Fills every data-i18n element and attribute under `root`. */
export function translate(root) {
  for (const element of root.querySelectorAll("[data-i18n]")) {
    element.textContent = t(element.dataset.i18n);
  }
  for (const element of root.querySelectorAll("[data-i18n-attr]")) {
    for (const pair of element.dataset.i18nAttr.split(";")) {
      const [attribute, key] = pair.split(":").map((part) => part.trim());
      if (attribute && key) element.setAttribute(attribute, t(key));
    }
  }
}

/** Numbers and times in the page's language. */
export function formatNumber(value) {
  return new Intl.NumberFormat(language).format(value);
}

export function formatTime(iso) {
  if (!iso) return "";
  return new Intl.DateTimeFormat(language, { dateStyle: "medium", timeStyle: "short" }).format(new Date(iso));
}
