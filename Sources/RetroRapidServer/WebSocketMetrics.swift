/// The game side's figures in the shared `Metrics` registry (GET /metrics).
///
/// Threading rule: service thread. The hottest counts (messages sent, steps) add up in plain
/// integers and reach the registry once per timer batch (`flush`), not once per message: each
/// registry update takes a lock.
final class WebSocketMetrics {
    let connections: Gauge
    let gamesRunning: Gauge
    let errors: Counter
    let gamesEnded: Counter
    /// Connections the server ended because the client did not keep up its side, by reason.
    let dropped: Counter
    private let steps: Counter
    private let received: Counter
    private let sentTotal: Counter
    private let queuedTotal: Counter
    /// Counted since the last `flush`.
    var sent = 0
    /// Of `sent`, the messages that waited in a connection's queue.
    var queued = 0
    var stepsTaken = 0
    var receivedCount = 0

    init(_ metrics: Metrics) {
        connections = metrics.gauge("retrorapid_websocket_connections", help: "Open game connections on /ws.")
        gamesRunning = metrics.gauge("retrorapid_games_running",
                                     help: "Games in progress, including paused ones and those waiting for a player to reconnect.")
        steps = metrics.counter("retrorapid_game_steps_total", help: "Game steps computed, over all games.")
        received = metrics.counter("retrorapid_websocket_messages_received_total", help: "Messages received from game clients.")
        sentTotal = metrics.counter("retrorapid_websocket_messages_sent_total", help: "Messages sent or queued for game clients.")
        queuedTotal = metrics.counter("retrorapid_websocket_messages_queued_total",
                                      help: "Messages that waited in a connection's queue because the socket was still busy with an earlier one (the rest were written at once); a steady rise means clients or the network cannot keep up.")
        errors = metrics.counter("retrorapid_websocket_errors_total", help: "Error messages sent to game clients, by code.",
                                 labelNames: ["code"])
        gamesEnded = metrics.counter("retrorapid_games_ended_total", help: "Games ended, by reason.", labelNames: ["reason"])
        dropped = metrics.counter("retrorapid_websocket_clients_dropped_total",
                                  help: "Game connections closed because the client did not read (slow_reader) or said nothing in time (hello_timeout, idle_timeout).",
                                  labelNames: ["reason"])
    }

    func flush() {
        if sent > 0 { sentTotal.increment(by: Double(sent)); sent = 0 }
        if queued > 0 { queuedTotal.increment(by: Double(queued)); queued = 0 }
        if stepsTaken > 0 { steps.increment(by: Double(stepsTaken)); stepsTaken = 0 }
        if receivedCount > 0 { received.increment(by: Double(receivedCount)); receivedCount = 0 }
    }
}
