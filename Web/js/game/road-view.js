// Draws the road in the DOM (not a canvas, so forced colours and zoom just work): three lanes
// of LCD cells, as many rows as the server sends. Cars are shapes, the player's car another
// shape, a crash a third; the whole road has a text alternative. It only reads state.
import { describeRoad } from "./describe.js";

export class RoadView {
  #element;
  #cells = [];

  constructor(element) {
    this.#element = element;
  }

  #build(rows) {
    this.#cells = [];
    const rowElements = [];
    for (let row = 0; row < rows; row++) {
      const rowElement = document.createElement("div");
      rowElement.className = "road-row";
      const cells = [];
      for (let lane = 0; lane < 3; lane++) {
        const cell = document.createElement("span");
        cell.className = "cell";
        cell.dataset.lane = String(lane);
        const car = document.createElement("span");
        car.className = "car";
        cell.append(car);
        rowElement.append(cell);
        cells.push(cell);
      }
      rowElements.push(rowElement);
      this.#cells.push(cells);
    }
    this.#element.replaceChildren(...rowElements);
  }

  render(state) {
    const rows = state.grid?.length ?? 7;
    if (this.#cells.length !== rows) this.#build(rows);
    const playerRow = rows - 1;
    for (let row = 0; row < rows; row++) {
      for (let lane = 0; lane < 3; lane++) {
        const cell = this.#cells[row][lane];
        const isPlayer = row === playerRow && lane === state.lane && state.grid !== null;
        const crashed = isPlayer && state.crash !== null;
        cell.classList.toggle("lit", Boolean(state.grid?.[row]?.[lane]) && !isPlayer);
        cell.classList.toggle("player", isPlayer && !crashed);
        cell.classList.toggle("crash", crashed);
      }
    }
    this.#element.setAttribute("aria-label", describeRoad(state));
    this.#element.dataset.step = String(state.step);
  }
}
