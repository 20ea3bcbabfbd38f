// <rr-cue-strip>: the safe-lane strip under a road (C, E, G, one per lane), drawn by
// EffectsView or a tutorial picture. One copy of its markup for every page that shows a road;
// light DOM, so the page's styles and checks see the list itself.
export class CueStripElement extends HTMLElement {
  connectedCallback() {
    if (this.firstElementChild) return;
    this.innerHTML = `<ol class="cue-strip" data-part="cue-strip" aria-hidden="true">
  <li data-lane="0"><span class="note">C</span> <span class="mark"></span></li>
  <li data-lane="1"><span class="note">E</span> <span class="mark"></span></li>
  <li data-lane="2"><span class="note">G</span> <span class="mark"></span></li>
</ol>`;
  }
}

customElements.define("rr-cue-strip", CueStripElement);
