// The sign-in page: name and password to a session cookie, then on to the page asked for.
import { api, clearError, errorText, ready, showError } from "./console.js";

const form = document.getElementById("sign-in");
const errorBox = document.getElementById("sign-in-error");

/** Where to go after signing in: a page of this console only, never another site. */
function nextPage() {
  const next = new URLSearchParams(location.search).get("next") ?? "";
  return /^[a-z-]+\.html(\?[A-Za-z0-9=&_%.-]*)?$/.test(next) ? `/${next}` : "/index.html";
}

form.addEventListener("submit", async (event) => {
  event.preventDefault();
  clearError(errorBox);
  const name = form.elements.name.value.trim();
  const password = form.elements.password.value;
  if (!name || !password) {
    showError(errorBox, "Enter your operator name and your password.");
    return;
  }
  const button = form.querySelector("button");
  button.disabled = true;
  try {
    const answer = await api("POST", "/api/session", { name, password });
    if (answer.status === 200) {
      location.assign(nextPage());
      return;
    }
    form.elements.password.value = "";
    showError(errorBox, errorText(answer));
  } catch {
    showError(errorBox, "The console did not answer. Check that the server is running, then try again.");
  } finally {
    button.disabled = false;
  }
});
ready();
