// One-switch "dodge" (docs/GAME_RULES.md, "One-switch play"): one press moves the car to the
// nearest lane the last cue called safe, so the one decision a step asks for ("is my lane
// safe?") is one press, offered afresh every step. The server still decides every move.
// Ties (only from the middle, when both sides are safe and the middle is not) go left: a fixed
// rule the player can learn and predict, the way the cue's low note (C) is always left.

/** The lane a dodge goes to: the player's own lane if it is safe (nothing to do), else the nearest safe one. */
export function dodgeTarget(lane, safeLanes) {
  if (lane === null || lane === undefined || !safeLanes?.length || safeLanes.includes(lane)) return lane;
  return [...safeLanes].sort((a, b) => Math.abs(a - lane) - Math.abs(b - lane) || a - b)[0];
}

/** The moves, in order, that take the car from `lane` to the dodge's target (none, one or two). */
export function dodgeMoves(lane, safeLanes) {
  const target = dodgeTarget(lane, safeLanes);
  if (target === lane || target === undefined || target === null) return [];
  return Array(Math.abs(target - lane)).fill(target < lane ? "left" : "right");
}
