// MatchHost, starting a solo game: `start`, a play consumed (and, in a cluster, the game
// claimed for this node) on the storage thread, then the game's match and `started`.
// Threading rule: service thread only, as all of MatchHost (MatchHost.swift), the worker's
// completions included.

import Foundation
import RetroRapidDomain
import RetroRapidLWS
import RetroRapidRules

extension MatchHost {
    // MARK: - Starting a solo game

    /// `road` `.daily`: the game runs on the day's road of the level, whose seed the storage job
    /// finds (or makes, the first time anyone asks) before the game begins, practice included;
    /// a scored one takes the player's one attempt of the day in the play's transaction.
    func start(level: SpeedLevel, practice: Bool, road: ClientMessage.StartRoad = .random, for identity: WebSocketConnection.Identity,
               on connection: WebSocketConnection) {
        if shuttingDown {
            return refuse(connection, ProtocolError(.shuttingDown, "The server is restarting; start again in a moment.", inReplyTo: "start"))
        }
        if let placed = playerSeat(of: identity.playerID) {
            let whereItIs = placed.seat.player === connection ? "on this connection" : "waiting for you"
            return refuse(connection, ProtocolError(.gameInProgress,
                "Game \(placed.session.gameID) is \(whereItIs): send resume to go on with it, or quit to end it, before starting another.",
                inReplyTo: "start"))
        }
        if isStarting(identity.playerID) {
            return refuse(connection, ProtocolError(.startPending, "A game is already starting for you.", inReplyTo: "start"))
        }
        let gameID = Match.newGameID()
        let seed = Match.newSeed()
        let daily = road == .daily
        if practice && !role.isCluster && !daily {
            // Practice consumes no play and scores nothing: no need to wait for the database.
            let placed = startMatch(gameID: gameID, playerID: identity.playerID, level: level, seed: seed, practice: true)
            placed.seat.playerName = identity.displayName
            recorder.recordPracticeStart(placed.session, seed: seed)
            attach(placed.seat, of: placed.match, to: connection)
            send(.started(placed.session.snapshot, quota: nil), to: connection)
            return
        }
        beginStart(identity.playerID)
        let connectionID = connection.id
        let playerID = identity.playerID
        let playerName = identity.displayName
        let (nodeID, lease) = (role.nodeID, role.lease)
        // Keyed by the player, as every job of a game's life is (GameRecorder, CheckpointWriter):
        // its start, checkpoints, cancel and record run in this order on one storage thread.
        worker.perform(orderedBy: playerID, { storage -> (QuotaStatus?, UInt64, GameRoad) in
            let now = storage.now
            var start = RunningGameStart(publicID: gameID, playerID: playerID, level: level, seed: seed, practice: practice, startedAt: now)
            if daily {
                // The day's road, the same on every node: made at random by whoever asks first.
                let day = UTCDay(containing: now)
                start.seed = try storage.dailyRoads.seed(level: level, day: day, now: now)
                start.road = .daily(day)
            }
            // In a cluster the game is also claimed for this node (one game per player, cluster-wide).
            if let nodeID { return (try GameHandoff.beginClaimed(start, nodeID: nodeID, lease: lease, storage: storage), start.seed, start.road) }
            // The play (and a daily attempt) and the game's running_games row, in one transaction.
            return (try storage.runningGames.begin(start), start.seed, start.road)
        }, then: { [self] result in
            switch result {
            case .success(let (quota, seed, road)):
                startAnswered(.success(quota), gameID: gameID, playerID: playerID, playerName: playerName, level: level,
                              seed: seed, practice: practice, road: road, connectionID: connectionID)
            case .failure(let error):
                startAnswered(.failure(error), gameID: gameID, playerID: playerID, playerName: playerName, level: level,
                              seed: seed, practice: practice, connectionID: connectionID)
            }
        })
    }

    private func startAnswered(_ result: Result<QuotaStatus?, any Error>, gameID: String, playerID: Int64, playerName: String,
                               level: SpeedLevel, seed: UInt64, practice: Bool = false, road: GameRoad = .random,
                               connectionID: Int) {
        defer {
            // The shutdown may have been waiting for this start (after its cancel is queued).
            endStart(playerID)
            metrics.flush()
        }
        let connection = connections[connectionID]
        switch result {
        case .success(let quota):
            if shuttingDown {
                recorder.cancelStart(gameID: gameID, playerID: playerID)
                if let connection { refuse(connection, ProtocolError(.shuttingDown, "The server is restarting; start again in a moment.", inReplyTo: "start")) }
                return
            }
            let placed = startMatch(gameID: gameID, playerID: playerID, level: level, seed: seed, practice: practice)
            placed.seat.playerName = playerName
            placed.session.road = road
            guard let connection, connection.closing == nil else {
                // The play is spent and the player gone: the game waits for them, paused,
                // like any game whose connection dropped.
                let now = MonotonicClock.now()
                placed.session.detach(now: now, deadline: now + Int64(limits.disconnectGraceSeconds) * 1_000_000)
                reschedule(placed.match)
                return
            }
            attach(placed.seat, of: placed.match, to: connection)
            send(.started(placed.session.snapshot, quota: quota), to: connection)
            refreshIdleTimeout(connection)
        case .failure(let error as GameElsewhereError):
            if let connection {
                refuse(connection, ProtocolError(.gameInProgress,
                    "Game \(error.gameID) is waiting for you: send resume to go on with it, or quit to end it, before starting another.",
                    inReplyTo: "start"))
            }
        case .failure(let error as QuotaExhaustedError):
            if let connection {
                connections.refuse(connection, ProtocolError(.noPlaysLeft, error.storeError.message, inReplyTo: "start"),
                                   quota: error.status)
            }
        case .failure(let error as DailyRoadPlayedError):
            if let connection {
                var refusal = ProtocolError(.dailyPlayed, error.storeError.message, inReplyTo: "start")
                refusal.resetsAt = error.resetsAt
                refuse(connection, refusal)
            }
        case .failure(let error):
            logger.error("could not start a game", metadata: ["player.row": String(playerID), "error": "\(error)"])
            if let connection {
                refuse(connection, ProtocolError(.unavailable, "The game could not start just now; nothing was used up. Try again.",
                                                 inReplyTo: "start"))
            }
        }
    }

    /// A solo match, running from now. Its seed was chosen before: a ranked game's
    /// `running_games` row, written with the play it consumes, holds it.
    private func startMatch(gameID: String, playerID: Int64, level: SpeedLevel, seed: UInt64, practice: Bool) -> PlayerSeat {
        let match = Match(
            id: nextID(), gameID: gameID, playerID: playerID, level: level, seed: seed, practice: practice,
            graceLimitMilliseconds: limits.latencyGraceMilliseconds, startedAt: Date(), now: MonotonicClock.now())
        register(match)
        logger.info("game started", metadata: [
            "game.id": gameID, "game.level": level.rawValue, "game.practice": String(practice)])
        return PlayerSeat(match: match, seat: match.seats[0])
    }
}
