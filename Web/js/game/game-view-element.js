// <rr-game-view mode="…">: one game on screen (the road, its cue strip, the race status and,
// on a road the player steers, Pause, End game and the controls), written once for every page.
// GameController, HudView, EffectsView and WatchView find its parts by `data-part`; this file
// is the one place that makes them, so no page can miss one. Light DOM (no shadow root), so
// the page's styles, axe and the tests see the same elements as any other markup.
//
// The mode says whose game it is and where it sits:
//   play, race, ghost, tutorial: the player's own road (role application, the switch's scan,
//     Pause, End game, the controls); watch, replay: someone else's, read-only (role group).
//   play, watch, replay: the page's main view (h2); race, ghost, tutorial: inside a section of
//     their own (h3). race puts the status in a side column; tutorial keeps its words under
//     the road and its buttons under the status, in the lesson's narrow column.
// What only one page has stays in that page, as children naming where they go:
//   slot="road" in the road (over it), slot="hud" after the status list, slot="side" after
//   the status in race's side column, slot="status" before the buttons, slot="actions" and
//   slot="actions-end" before and after "Show the controls", slot="extras" after the buttons.
// ids (headings, the keys' hint, the controls panel) are made here, unique per view, so a
// page with several views has no duplicates. The mode is read once, when first connected.
import { stringsLoaded, translate } from "../app/i18n.js";
import "./cue-strip-element.js";

const MODES = {
  play: { own: true, heading: "h2", words: "play" },
  race: { own: true, heading: "h3", words: "play", side: true },
  ghost: { own: true, heading: "h3", words: "play" },
  tutorial: { own: true, heading: "h3", words: "play", narrow: true },
  watch: { own: false, heading: "h2", words: "watch" },
  replay: { own: false, heading: "h2", words: "replay" },
};

let views = 0;

export class GameViewElement extends HTMLElement {
  #rendered = false;

  get mode() {
    return MODES[this.getAttribute("mode")] ? this.getAttribute("mode") : "play";
  }

  connectedCallback() {
    if (this.#rendered) return;
    this.#rendered = true;
    const slotted = new Map();
    for (const child of [...this.children].filter((element) => element.hasAttribute("slot"))) {
      const name = child.getAttribute("slot");
      child.removeAttribute("slot");
      slotted.set(name, [...(slotted.get(name) ?? []), child]);
    }
    this.innerHTML = markup(MODES[this.mode], `game-view-${++views}-`);
    for (const marker of this.querySelectorAll("rr-slot")) {
      marker.replaceWith(...(slotted.get(marker.getAttribute("name")) ?? []));
    }
    if (stringsLoaded()) translate(this);
  }
}

function markup({ own, heading: h, words, side, narrow }, id) {
  const scan = own ? `
      <li data-option="left"><span class="scan-symbol">&#9664;</span> <span data-i18n="play.scanLeft"></span></li>
      <li data-option="stay"><span class="scan-symbol">&#9679;</span> <span data-i18n="play.scanStay"></span></li>
      <li data-option="right"><span data-i18n="play.scanRight"></span> <span class="scan-symbol">&#9654;</span></li>
    ` : "";
  const soundAndKeys = `
    <p class="sound-caption" data-part="caption" aria-hidden="true"></p>
    <p id="${id}keys-short" class="hint" data-part="keys-short"></p>`;
  const buttons = own ? `
    <div class="actions">
      <button type="button" data-part="pause" hidden></button>
      <button type="button" data-part="quit" hidden data-i18n="play.quit"></button>
      <rr-slot name="actions"></rr-slot>
      <button type="button" data-part="help" aria-expanded="false" aria-controls="${id}controls-help" data-i18n="play.showControls"></button>
      <rr-slot name="actions-end"></rr-slot>
    </div>` : "";
  const hud = `
  <section class="hud" aria-labelledby="${id}hud-heading">
    <${h} id="${id}hud-heading" data-i18n="${words}.hudHeading"></${h}>
    <dl class="hud-list">
      <div class="hud-score"><dt data-i18n="play.score"></dt><dd><span class="digits" data-part="score-digits" aria-hidden="true"></span><span class="visually-hidden" data-part="score"></span></dd></div>
      <div><dt data-i18n="play.lane"></dt><dd data-part="lane"></dd></div>
      <div><dt data-i18n="play.speed"></dt><dd data-part="speed"></dd></div>
      <div><dt data-i18n="play.state"></dt><dd data-part="state"></dd></div>
    </dl>
    <rr-slot name="hud"></rr-slot>${narrow ? buttons : ""}
  </section>`;
  return `
<div class="play-layout${side ? " race-layout" : ""}" data-part="game">
  <section class="road-section" aria-labelledby="${id}road-heading">
    <${h} id="${id}road-heading" class="visually-hidden" data-i18n="${words}.roadHeading"></${h}>
    <div class="play-area" data-part="play-area" tabindex="0" role="${own ? "application" : "group"}" data-i18n-attr="aria-label:${words}.areaLabel" aria-describedby="${id}keys-short">
      <div class="road" data-part="road" role="img"></div>
      <p class="event-banner" data-part="banner" aria-hidden="true"></p>
      <p class="event-banner paused-sign" data-part="paused-sign" aria-hidden="true" hidden></p>
      <rr-slot name="road"></rr-slot>
      <ol class="scan" data-part="scan" aria-hidden="true" hidden>${scan}</ol>
    </div>
    <rr-cue-strip></rr-cue-strip>${narrow ? soundAndKeys : ""}
  </section>${side ? `
  <div class="race-side">${hud}
    <rr-slot name="side"></rr-slot>
  </div>` : hud}${narrow ? "" : `
  <!-- Under the road and the race status, across both: the last sound in words, the keys and
       the buttons, which need the width more than the road does. -->
  <div class="play-extras">${soundAndKeys}
    <rr-slot name="status"></rr-slot>${buttons}
    <rr-slot name="extras"></rr-slot>
  </div>`}
</div>${own ? `
<section id="${id}controls-help" class="controls-help" data-part="controls-help" aria-labelledby="${id}controls-heading" hidden>
  <${h} id="${id}controls-heading" data-i18n="play.controlsHeading"></${h}>
  <ul data-part="controls-list"></ul>
</section>` : ""}`;
}

customElements.define("rr-game-view", GameViewElement);
