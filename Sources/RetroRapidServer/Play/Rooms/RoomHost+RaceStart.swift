// RoomHost, starting a race: `startRace`, a play consumed per racer, the race's match and countdown.
// Threading rule: service thread only, as all of RoomHost (RoomHost.swift), the worker's completions included.

import Foundation
import RetroRapidDomain
import RetroRapidLWS

extension RoomHost {
    // MARK: - Starting a race

    func startRace(for identity: WebSocketConnection.Identity, on connection: WebSocketConnection) {
        let type = "startRace"
        guard let room = registry.room(of: identity.playerID) else {
            return refuse(connection, RoomRefusal.notInRoom.error(inReplyTo: type))
        }
        if matchHost.shuttingDown { return refuse(connection, shuttingDownError(type)) }
        let racers: [RaceRoom.Racer]
        do throws(RoomRefusal) {
            racers = try room.checkStart(by: identity.playerID)
        } catch let refusal {
            return refuse(connection, refusal.error(inReplyTo: type))
        }
        // A racer with a game of their own going cannot race too.
        if let busy = racers.first(where: { matchHost.game(of: $0.playerID) != nil || matchHost.isStarting($0.playerID) }) {
            return refuse(connection, ProtocolError(.notReady,
                "\(busy.name) has a game of their own running; they must finish or quit it first.", inReplyTo: type))
        }
        rebind(room, playerID: identity.playerID, to: connection)
        begin(room, racers: racers)
    }

    /// Consumes a play for each racer (none in a practice room), then starts the race with
    /// those whose play was taken, if 2 or more.
    func begin(_ room: RaceRoom, racers: [RaceRoom.Racer]) {
        room.beginStart()
        let seed = Match.newSeed()
        let gameIDs = Dictionary(uniqueKeysWithValues: racers.map { ($0.playerID, Match.newGameID()) })
        // Practice consumes no play: on a single server nothing to wait for. In a cluster each
        // game is still claimed for this node, as a practice `start` is.
        if room.practice && !matchHost.role.isCluster {
            return launch(room, racers: racers, gameIDs: gameIDs, seed: seed, quotas: [:])
        }
        let practice = room.practice
        starts[room.code] = StartProgress(racers: racers, gameIDs: gameIDs, seed: seed)
        let code = room.code
        let (nodeID, lease) = (matchHost.role.nodeID, matchHost.role.lease)
        let level = room.level
        for racer in racers {
            let gameID = gameIDs[racer.playerID]!
            let playerID = racer.playerID
            // Keyed by the player, as every job of a game's life is: its start, checkpoints and
            // record run in this order on one storage thread (as MatchHost.start does).
            matchHost.beginStart(playerID)
            worker.perform(orderedBy: playerID, { storage in
                let start = RunningGameStart(publicID: gameID, playerID: playerID, level: level, seed: seed,
                                             practice: practice, startedAt: storage.now)
                if let nodeID { return try GameHandoff.beginClaimed(start, nodeID: nodeID, lease: lease, storage: storage) }
                return try storage.runningGames.begin(start)
            }, then: { [self] result in playAnswered(result, racer: racer, code: code) })
        }
    }

    private func playAnswered(_ result: Result<QuotaStatus?, any Error>, racer: RaceRoom.Racer, code: RoomCode) {
        let playerID = racer.playerID
        matchHost.endStart(playerID)
        guard let progress = starts[code] else { return }
        switch result {
        case .success(let quota): progress.quotas[playerID] = quota
        case .failure(let error as QuotaExhaustedError):
            progress.failed.append((racer, ProtocolError(.noPlaysLeft, error.storeError.message, inReplyTo: "startRace"),
                                    error.status))
        case .failure(let error as GameElsewhereError):
            progress.failed.append((racer, ProtocolError(.gameInProgress,
                "Game \(error.gameID) is waiting for you: resume or quit it before racing.", inReplyTo: "startRace"), nil))
        case .failure(let error):
            logger.error("could not start a race game", metadata: ["player.row": String(playerID), "error": "\(error)"])
            progress.failed.append((racer, ProtocolError(.unavailable,
                "Your race game could not start just now; nothing was used up.", inReplyTo: "startRace"), nil))
        }
        progress.pending -= 1
        guard progress.pending == 0 else { return }
        starts[code] = nil
        guard let room = registry.room(code) else {
            // Everyone left meanwhile: every play taken goes back.
            for (playerID, _) in progress.quotas { matchHost.recorder.cancelStart(gameID: progress.gameIDs[playerID]!, playerID: playerID) }
            return
        }
        consumed(room, racers: progress.racers, gameIDs: progress.gameIDs, seed: progress.seed, quotas: progress.quotas,
                 failed: progress.failed)
    }

    /// Every racer's play is answered: the racers whose play failed are told why and sit out,
    /// not ready; with fewer than 2 left every play taken is given back and the room stays in
    /// the lobby.
    private func consumed(_ room: RaceRoom, racers: [RaceRoom.Racer], gameIDs: [Int64: String], seed: UInt64,
                          quotas: [Int64: QuotaStatus?], failed: [(RaceRoom.Racer, ProtocolError, QuotaStatus?)]) {
        for (racer, error, quota) in failed {
            room.unready(playerID: racer.playerID)
            if let connection = connectionOf(racer.playerID) { connections.refuse(connection, error, quota: quota) }
        }
        // Racers who left the room meanwhile do not race: their play goes back.
        let racing = racers.filter { quotas[$0.playerID] != nil && room.racer($0.playerID) != nil }
        let leftMeanwhile = racers.filter { quotas[$0.playerID] != nil && room.racer($0.playerID) == nil }
        for racer in leftMeanwhile { matchHost.recorder.cancelStart(gameID: gameIDs[racer.playerID]!, playerID: racer.playerID) }
        if racing.count < 2 || matchHost.shuttingDown {
            for racer in racing { matchHost.recorder.cancelStart(gameID: gameIDs[racer.playerID]!, playerID: racer.playerID) }
            room.cancelStart()
            let names = failed.map(\.0.name).joined(separator: ", ")
            let why = matchHost.shuttingDown
                ? ProtocolError(.shuttingDown, "The server is restarting; every play was given back.", inReplyTo: "startRace")
                : ProtocolError(.notReady, "The race needs 2 racers or more; \(names.isEmpty ? "too few" : names) could not "
                    + "race, so every play was given back.", inReplyTo: "startRace")
            for racer in room.racers { if let connection = connectionOf(racer.playerID) { connections.refuse(connection, why) } }
            return sendRoom(room)
        }
        launch(room, racers: racing, gameIDs: gameIDs, seed: seed, quotas: quotas)
    }

    /// The racers' games, one per racer on one seed, all starting at one deadline after the
    /// countdown: `started` to each now, `countdown` to every receiver, the first step one
    /// interval after the deadline.
    private func launch(_ room: RaceRoom, racers: [RaceRoom.Racer], gameIDs: [Int64: String], seed: UInt64,
                        quotas: [Int64: QuotaStatus?]) {
        let now = MonotonicClock.now()
        let startsAt = now + countdownMicroseconds
        let endsAt = startsAt + Int64(configuration.raceTimeLimitSeconds) * 1_000_000
        var entrants: [Race.Entrant] = []
        var entries: [RaceStandings.Entry] = []
        var startedMessages: [(WebSocketConnection, ServerMessage)] = []
        // Every session starts at the deadline: its first step comes one interval after it.
        let sessions = racers.map { racer in
            GameSession(id: matchHost.nextID(), gameID: gameIDs[racer.playerID]!, playerID: racer.playerID, level: room.level,
                        seed: seed, practice: room.practice, graceLimitMilliseconds: matchHost.limits.latencyGraceMilliseconds,
                        startedAt: Date(), now: startsAt)
        }
        let match = Match(id: matchHost.nextID(), kind: .race, seed: seed, startsAt: startsAt, drivers: sessions)
        guard matchHost.add(match) else {
            // A racer started a game of their own meanwhile, or the server is stopping.
            for session in sessions where !room.practice {
                matchHost.recorder.cancelStart(gameID: session.gameID, playerID: session.playerID)
            }
            room.cancelStart()
            let why = ProtocolError(.notReady, "A racer has a game of their own running; every play was given back.",
                                    inReplyTo: "startRace")
            for racer in room.racers { if let connection = connectionOf(racer.playerID) { connections.refuse(connection, why) } }
            return sendRoom(room)
        }
        let code = room.code
        match.roomCode = code.text
        raceByMatch[match.id] = code
        match.onSeatEnded = { [unowned self] seat, reason in self.seatEnded(seat, reason: reason, code: code) }
        for (index, racer) in racers.enumerated() {
            let seat = match.seats[index]
            let session = sessions[index]
            if room.practice && !matchHost.role.isCluster { matchHost.recorder.recordPracticeStart(session, seed: seed) }
            entrants.append(Race.Entrant(seat: racer.seat, playerID: racer.playerID, name: racer.name,
                                         gameID: session.gameID, seatIndex: index))
            entries.append(.init(seat: racer.seat, name: racer.name, gameID: session.gameID, score: 0,
                                 lane: session.game.state.lane.rawValue, step: 0, state: .racing))
            session.race = code
            let snapshot = session.snapshot
            if let connection = connectionOf(racer.playerID), connection.closing == nil {
                matchHost.attach(seat, of: match, to: connection)
                startedMessages.append((connection, .started(snapshot, quota: quotas[racer.playerID] ?? nil)))
            } else {
                session.detach(now: now, deadline: now + graceMicroseconds)
            }
        }
        matchHost.reschedule(match)
        lastRaceKey += 1
        let race = Race(key: lastRaceKey, seed: seed, startsAt: startsAt, endsAt: endsAt, entrants: entrants,
                        standings: RaceStandings(entries: entries,
                                                 intervalMicroseconds: Int64(configuration.standingsIntervalMilliseconds) * 1000))
        race.match = match
        run(of: room).race = race
        room.beginCountdown(seats: racers.map(\.seat))
        logger.info("race starting", metadata: ["room.code": room.code.text, "race.racers": String(racers.count),
                                                 "room.race": String(room.race)])
        // The room (counting down) first, then each racer's game, then the countdown.
        sendRoom(room)
        for (connection, started) in startedMessages { connections.send(started, to: connection) }
        send(.countdown(code: room.code, startsInMilliseconds: Int(countdownMicroseconds / 1000)), in: room)
        reschedule(room)
    }
}
