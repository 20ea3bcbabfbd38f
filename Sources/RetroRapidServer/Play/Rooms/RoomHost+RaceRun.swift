// RoomHost, a race running: watched by room, each racer's end, the room's timer, standings, the record.
// Threading rule: service thread only, as all of RoomHost (RoomHost.swift), the worker's completions included.

import Foundation
import RetroRapidDomain
import RetroRapidLWS

extension RoomHost {
    // MARK: - Watching a room's race

    /// `watch` with `room` (`WatchHost.roomSeat`): the race match and the seat index room seat
    /// `seat` races in (nil: the first racer's), or why not.
    func watchedSeat(code typed: String, seat: Int?) -> Result<(match: Match, seat: Int), ProtocolError> {
        guard let code = RoomCode(reading: typed), let room = registry.room(code) else {
            return .failure(RoomRefusal.roomNotFound(String(typed.prefix(16))).error(inReplyTo: "watch"))
        }
        guard let race = runs[code]?.race, let match = race.match else {
            return .failure(ProtocolError(.gameNotFound,
                "Room \(room.code) is in its lobby: no race to watch yet. Watch again once it starts.", inReplyTo: "watch"))
        }
        let entrant = seat.map { wanted in race.entrants.first { $0.seat == wanted } } ?? race.entrants.first
        guard let entrant else {
            return .failure(ProtocolError(.gameNotFound, "Room \(room.code) has no racer in seat \(seat ?? 0).", inReplyTo: "watch"))
        }
        return .success((match, entrant.seatIndex))
    }

    /// `watch` from the hub: a room another node holds (cluster mode) is answered
    /// `room_elsewhere`; everything else goes to the `WatchHost`.
    func watch(_ target: ClientMessage.WatchTarget, for identity: WebSocketConnection.Identity,
               on connection: WebSocketConnection) {
        // The code as the room writes it, however it was typed (`watching` repeats it).
        var written = target
        if case .room(let typed, let seat) = target, let code = RoomCode(reading: typed) { written = .room(code: code.text, seat: seat) }
        let target = written
        guard case .room(let typed, _) = target, nodeID != nil, let code = RoomCode(reading: typed),
              registry.room(code) == nil else {
            return watching.watch(target, for: identity, on: connection)
        }
        let connectionID = connection.id
        lookUpPlace(code) { [self] node in
            guard let connection = connections[connectionID] else { return }
            guard let node else { return watching.watch(target, for: identity, on: connection) }
            var refusal = ProtocolError(.roomElsewhere, "Room \(code) is on server \(node): connect to it and watch again.",
                                        inReplyTo: "watch")
            refusal.node = node
            connections.refuse(connection, refusal)
        }
    }

    /// How many watch the room's race now (every seat's watchers).
    func watcherCount(_ room: RaceRoom) -> Int {
        runs[room.code]?.race?.match?.seats.reduce(0) { $0 + $1.watchers.count } ?? 0
    }

    // MARK: - A race running

    /// A racer's game ended (crash, quit, grace over, time limit, shutdown), before it is saved.
    func seatEnded(_ seat: MatchSeat, reason: GameEndReason, code: RoomCode) {
        guard let race = runs[code]?.race, let session = seat.session,
              let index = race.entrants.firstIndex(where: { $0.seatIndex == seat.address.seat }) else { return }
        if race.entrants.allSatisfy({ $0.result != nil || $0.seatIndex == seat.address.seat }) {
            raceByMatch[seat.address.match] = nil
        }
        let state = session.game.state
        var entrant = race.entrants[index]
        let timeLimited = reason == .abandoned && MonotonicClock.now() >= race.endsAt
        entrant.result = timeLimited ? RaceStandings.RacerState.timeLimit.rawValue : reason.rawValue
        entrant.score = state.score
        entrant.steps = state.step
        race.entrants[index] = entrant
        let standingsState: RaceStandings.RacerState = switch reason {
        case .crash: .crashed
        case .abandoned where timeLimited: .timeLimit
        // Quit, left the room, or away past the grace.
        case .abandoned: .left
        default: .finished
        }
        race.standings.update(seat: entrant.seat, score: state.score, lane: state.lane.rawValue, step: state.step,
                              state: standingsState)
        // Taken now, in the same turn as the last game's end (a shutdown ends every game at
        // once, then closes the worker when nothing it knows of is in flight).
        if race.isOver { holdShutdown(race) }
        if let room = registry.room(code) { reschedule(room) }
    }

    private func holdShutdown(_ race: Race) {
        if racesHoldingShutdown.insert(race.key).inserted { matchHost.beginStore() }
    }

    func releaseShutdown(_ key: Int) {
        if racesHoldingShutdown.remove(key) != nil { matchHost.endStore() }
    }

    /// The room's timer: the countdown's end, standings due, the time limit, the race's end,
    /// dropped lobby racers whose grace is over.
    func roomTimerDue(_ room: RaceRoom, now: Int64) {
        guard let run = runs[room.code] else { return }
        for (playerID, deadline) in run.dropDeadlines where deadline <= now {
            run.dropDeadlines[playerID] = nil
            if room.state == .lobby && !room.starting { leave(playerID, answering: nil) }
        }
        guard registry.room(room.code) === room else { return }
        if let race = run.race, room.state == .countdown || room.state == .racing {
            if !race.started, now >= race.startsAt {
                race.started = true
                room.beginRacing()
                sendRoom(room)
            }
            if race.started, now >= race.endsAt, !race.isOver {
                // The time limit: the racers still racing end, stored abandoned with their scores.
                for entrant in race.entrants where entrant.result == nil {
                    if let match = race.match, let session = match.seats[entrant.seatIndex].session, !session.isOver {
                        matchHost.deliver(session.end(.abandoned, now: now), of: match, seat: match.seats[entrant.seatIndex])
                    }
                }
            }
            poll(race)
            if race.isOver {
                room.finish()
                send(.standings(code: room.code, racers: race.standings.takeLast(now: now)), in: room)
                sendRoom(room)
                afterSaves(room, race: race)
            } else if race.started || race.standings.lastSentAt == nil, let standings = race.standings.take(now: now) {
                send(.standings(code: room.code, racers: standings), in: room)
            }
        }
        reschedule(room)
    }

    /// Reads each racing racer's game into the standings (what changed is sent at the next
    /// due time): a few numbers per racer per interval, no hook on every step.
    private func poll(_ race: Race) {
        for entrant in race.entrants where entrant.result == nil {
            guard let session = race.match?.seats[entrant.seatIndex].session else { continue }
            let state = session.game.state
            let racerState: RaceStandings.RacerState = session.isDisconnected ? .away : (state.isOver ? .crashed : .racing)
            race.standings.update(seat: entrant.seat, score: state.score, lane: state.lane.rawValue, step: state.step,
                                  state: racerState)
        }
    }

    /// Every racer's game is being saved: once each save is done (a job behind it on the same
    /// player's storage lane answers), the race is recorded, `raceOver` goes out and the room
    /// is back in the lobby.
    private func afterSaves(_ room: RaceRoom, race: Race) {
        race.savesPending = race.entrants.count
        let code = room.code
        let key = race.key
        for entrant in race.entrants {
            worker.perform(orderedBy: entrant.playerID, { _ in () }, then: { [self] _ in
                guard let room = registry.room(code), let race = runs[code]?.race, race.key == key else {
                    return releaseShutdown(key)
                }
                race.savesPending -= 1
                if race.savesPending == 0 { recordRace(room, race: race) }
            })
        }
    }

    /// Stores the finish order (`RaceRepository`, one transaction), then answers `raceOver`. A
    /// race that cannot be stored still ends for its racers: their games are saved already, and
    /// `raceId` is null.
    private func recordRace(_ room: RaceRoom, race: Race) {
        let placed = race.standings.placed
        let results = placed.compactMap { entry -> RaceOutcome.Result? in
            guard let entrant = race.entrants.first(where: { $0.seat == entry.seat }) else { return nil }
            return RaceOutcome.Result(place: entry.place, seat: entry.seat, name: entry.name, gameID: entry.gameID,
                                      score: entry.score, reason: entrant.result ?? "abandoned")
        }
        let entries = results.compactMap { result -> NewRace.Entry? in
            guard let entrant = race.entrants.first(where: { $0.seat == result.seat }) else { return nil }
            return NewRace.Entry(place: result.place, seat: result.seat, playerID: entrant.playerID, gameID: result.gameID,
                                 score: result.score, endReason: RaceEndReason(rawValue: result.reason) ?? .abandoned)
        }
        // A race every racer quit during its countdown ends before its start deadline: it never
        // ran, and is stored as starting when it ended (no time raced), not refused for ending first.
        let endedAt = Date()
        let newRace = NewRace(roomCode: room.code.text, level: room.level, practice: room.practice, seed: race.seed,
                              startedAt: min(race.startedAt, endedAt), endedAt: endedAt, entries: entries)
        let code = room.code
        let key = race.key
        worker.perform({ storage in try storage.races.record(newRace).publicID }, then: { [self] result in
            // After `raceOver` went out: a shutdown closes the connections once nothing holds it.
            defer { releaseShutdown(key) }
            let raceID: String?
            switch result {
            case .success(let id): raceID = id
            case .failure(let error):
                raceID = nil
                logger.error("could not store a race", metadata: ["room.code": code.text, "error": "\(error)"])
            }
            guard let room = registry.room(code), let race = runs[code]?.race else {
                runs[code]?.race = nil
                return
            }
            raceRecorded(room, race: race, outcome: RaceOutcome(code: code, raceID: raceID, results: results))
        })
    }

    private func raceRecorded(_ room: RaceRoom, race: Race, outcome: RaceOutcome) {
        guard registry.room(room.code) === room else {
            runs[room.code]?.race = nil
            if let match = race.match { watching.raceEnded(match) }
            return
        }
        logger.info("race over", metadata: ["room.code": room.code.text, "race.id": outcome.raceID ?? "-"])
        // To the racers and the race's watchers (still on it); then the watch of the race is over.
        send(.raceOver(outcome), in: room)
        runs[room.code]?.race = nil
        let watchers = race.match.map { watching.raceEnded($0) } ?? []
        room.backToLobby()
        // Racers who dropped during the race and have not come back get the lobby's grace.
        let deadline = MonotonicClock.now() + graceMicroseconds
        for racer in room.racers where connectionOf(racer.playerID) == nil {
            room.setConnected(playerID: racer.playerID, false)
            run(of: room).dropDeadlines[racer.playerID] = deadline
        }
        sendRoom(room, alsoTo: watchers)
        reschedule(room)
    }
}
