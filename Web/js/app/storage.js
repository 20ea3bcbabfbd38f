// Device-local storage that still works when localStorage is missing or refused (private
// modes, blocked cookies): the page then forgets on reload instead of failing.
const memory = new Map();

function backing() {
  try {
    const probe = "__retrorapid_probe__";
    window.localStorage.setItem(probe, probe);
    window.localStorage.removeItem(probe);
    return window.localStorage;
  } catch {
    return null;
  }
}

const store = backing();

export function read(key) {
  if (store) return store.getItem(key);
  return memory.has(key) ? memory.get(key) : null;
}

export function write(key, value) {
  if (store) store.setItem(key, value);
  else memory.set(key, value);
}

export function remove(key) {
  if (store) store.removeItem(key);
  else memory.delete(key);
}

export function readJSON(key) {
  const text = read(key);
  if (!text) return null;
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}

export function writeJSON(key, value) {
  write(key, JSON.stringify(value));
}
