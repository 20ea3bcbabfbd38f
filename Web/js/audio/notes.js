// The lane notes (docs/GAME_RULES.md): C4, E4, G4 for left, middle, right, panned left, centre, right.
// Pitch alone still tells the lane when the mono option removes the panning.
export const LANE_FREQUENCIES = [261.63, 329.63, 392.0];
export const LANE_PANS = [-1, 0, 1];
export const LANE_LETTERS = ["C", "E", "G"];
