// The game as the server last described it: a pure reducer from server messages (docs/
// PROTOCOL.md) to a plain state object. Nothing here decides an outcome; it only records.
export function initialState() {
  return {
    phase: "idle",          // idle | starting | running | paused | over | detached
    gameId: null,
    level: null,
    practice: false,
    step: 0,
    grid: null,             // rows top first, [left, middle, right], 1 = car; last row is the player's
    lane: 1,
    score: 0,
    interval: null,
    speedStage: 0,
    safeLanes: [],
    pauseReason: null,
    crash: null,
    result: null,
    quota: null,
    resumable: null,
  };
}

function fromSnapshot(state, game) {
  return {
    ...state,
    gameId: game.gameId,
    level: game.level,
    practice: game.practice,
    step: game.step,
    grid: game.grid,
    lane: game.lane,
    score: game.score,
    interval: game.interval,
    speedStage: game.speedStage ?? 0,
    safeLanes: game.safeLanes ?? [],
    crash: null,
    result: null,
    resumable: null,
  };
}

export function reduce(state, message) {
  switch (message.type) {
    case "welcome":
      return { ...state, quota: message.quota ?? state.quota, resumable: message.resumable };
    case "started":
      return { ...fromSnapshot(state, message.game), phase: "running", quota: message.quota ?? state.quota };
    case "snapshot":
      return { ...fromSnapshot(state, message.game), phase: message.game.paused ? "paused" : "running" };
    case "step":
      return {
        ...state,
        step: message.step,
        grid: message.grid,
        lane: message.lane,
        score: message.score,
        interval: message.interval,
        safeLanes: message.safeLanes ?? [],
      };
    case "moved":
      return { ...state, lane: message.lane };
    case "speedUp":
      return { ...state, interval: message.interval, speedStage: message.stage };
    case "crash":
      return { ...state, crash: { kind: message.kind, lane: message.lane, step: message.step }, score: message.score };
    case "gameOver":
      return { ...state, phase: "over", result: message, quota: message.quota ?? state.quota };
    case "paused":
      return { ...state, phase: "paused", pauseReason: message.reason };
    case "resumed":
      return { ...state, phase: "running", pauseReason: null };
    case "detached":
      return { ...state, phase: "detached" };
    case "error":
      return {
        ...state,
        phase: message.inReplyTo === "start" && state.phase === "starting" ? "idle" : state.phase,
        quota: message.quota ?? state.quota,
      };
    default:
      return state;
  }
}

/** Whether the player's inputs should reach the server now. */
export function playing(state) {
  return state.phase === "running";
}

/** A game is on screen (running or paused): keys belong to the road. */
export function inGame(state) {
  return state.phase === "running" || state.phase === "paused";
}
