// A small picture of one cue pattern, drawn by the game's own RoadView and safe-lane strip
// (Web/js/game/road-view.js, effects-view.js): the row about to reach you with a car in each
// blocked lane, your car below it, and C/E/G ticked or crossed under the lanes, so what is
// heard is also seen in the shapes the race uses. The road's text alternative comes from
// RoadView, as in a race; `reveal: false` hides the cars and the marks (the drill's quiz).
import { RoadView } from "../game/road-view.js";
import { EffectsView } from "../game/effects-view.js";
import { laneName } from "../game/describe.js";
import { t } from "../app/i18n.js";

export class PatternPicture {
  constructor(root) {
    this.root = root;
    this.road = new RoadView(root.querySelector("[data-part='road']"));
    this.strip = new EffectsView(root);
  }

  /** Draws `safe` (lanes) with the player's car in `lane`. */
  show(safe, lane = 1, { reveal = true, crash = false } = {}) {
    const arriving = [0, 1, 2].map((l) => (reveal && !safe.includes(l) ? 1 : 0));
    const state = {
      grid: [[0, 0, 0], arriving, [0, 0, 0]],
      lane,
      safeLanes: reveal ? safe : [],
      crash: crash ? { lane } : null,
      step: 0,
    };
    this.road.render(state);
    // Hidden cars: the road's own words would say "safe next: none"; say what is shown instead.
    if (!reveal) this.root.querySelector("[data-part='road']").setAttribute("aria-label", t("tutorial.drill.hiddenRoad", { lane: laneName(lane) }));
    this.strip.renderSafeLanes(safe, reveal);
    this.root.dataset.safe = safe.join(",");
    this.root.dataset.lane = String(lane);
  }
}
