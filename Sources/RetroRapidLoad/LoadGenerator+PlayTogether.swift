/// The race and watch tests' side of `LoadGenerator` (docs/PROTOCOL.md, "Rooms and races" and
/// "Watching"): racers open, join, get ready and start rooms, then play their race games like
/// solo players (the same bot, the same input→result timing, in `LoadGenerator`); watchers
/// follow the players' games and count what reaches them.
///
/// Threading rule: as the rest of `LoadGenerator`, everything here runs on its service thread
/// (the libwebsockets callbacks and the one timer).
extension LoadGenerator {
    // MARK: - Racers

    /// A racer signed in with no game: the host opens its room; the others join once the
    /// host's `room` answer has brought the code (`roomUpdate` plans the ones that wait).
    func enterRoom(_ index: Int, now: Int64) {
        if seating.isHost(index) {
            // Spread over one step, as solo first starts are, so the races' steps are spread.
            plan(index, .openRoom, at: now + Int64(players[index].bot.spread(below: interval)) * 1000)
        } else if !roomCodes[seating.room(of: index)].isEmpty {
            plan(index, .joinRoom, at: now + Int64(players[index].bot.spread(below: 200)) * 1000)
        }
    }

    /// A race's `started` (or a `snapshot` of a game taken back): its first step is timed from
    /// the countdown's deadline when that came first, else not at all (the `countdown` sets it).
    func raceGameStarted(_ index: Int) {
        players[index].lastStepAt = players[index].raceStartsAt
        players[index].raceStartsAt = 0
    }

    /// A race's game ended: back to the room to wait for the race's end (or, for a game taken
    /// back from an earlier run, on to the room it has not joined yet).
    func raceGameOver(_ index: Int, now: Int64) {
        if players[index].seat >= 0 {
            setState(index, .inRoom)
        } else {
            setState(index, .lobby)
            enterRoom(index, now: now)
        }
    }

    func racerReceived(_ index: Int, _ message: MessageScanner, now: Int64) {
        switch message.kind {
        case .room:
            if let room = RoomMessage(message) { roomUpdate(index, room, now: now) }
        case .countdown:
            if seating.isHost(index) {
                statistics.racesStarted += 1
                statistics.wholeRun.racesStarted += 1
            }
            // The first step comes one interval after the countdown's deadline, not after
            // `started`: time it from there (whichever of the two came first).
            let deadline = now + Int64(message.integer("startsInMs") ?? 0) * 1000
            if players[index].state == .playing, players[index].lastStep == 0 {
                players[index].lastStepAt = deadline
            } else {
                players[index].raceStartsAt = deadline
            }
        case .standings:
            statistics.standingsReceived += 1
            statistics.standingsBytes += message.bytes.count
        case .raceOver:
            if seating.isHost(index) {
                statistics.racesEnded += 1
                statistics.wholeRun.racesEnded += 1
                players[index].startSent = false
            }
            // The rematch: ready again after a moment's thought, as a solo player starts again.
            players[index].readyPlanned = true
            plan(index, .ready, at: now + Int64(players[index].bot.thinkTime()) * 1000)
        case .roomLeft:
            statistics.roomsLeft += 1
            players[index].seat = -1
            if players[index].state == .inRoom { setState(index, .lobby) }
        default:
            break
        }
    }

    private func roomUpdate(_ index: Int, _ room: RoomMessage, now: Int64) {
        let number = seating.room(of: index)
        if roomCodes[number].isEmpty {
            roomCodes[number] = Array(room.code.utf8)
            statistics.wholeRun.roomsOpened += 1
            // The members who signed in before the code came join now, spread over 200 ms.
            for member in seating.members(ofRoom: number)
            where member != index && players[member].state == .lobby && players[member].seat < 0 && players[member].wsi != nil {
                plan(member, .joinRoom, at: now + Int64(players[member].bot.spread(below: 200)) * 1000)
            }
        }
        if let seat = room.seat {
            players[index].seat = seat
            if players[index].state == .lobby { setState(index, .inRoom) }
        }
        if room.state == "lobby", !players[index].readyPlanned {
            players[index].readyPlanned = true
            plan(index, .ready, at: now + Int64(players[index].bot.spread(below: 300)) * 1000)
        }
        if seating.isHost(index), room.canStart, !players[index].startSent {
            players[index].startSent = true
            players[index].outgoing.insert(.startRace)
            players[index].wsi?.requestWriteable()
        }
    }

    /// An `error` to a racer (already counted): what it means for the room it is in.
    func raceRefused(_ index: Int, _ message: MessageScanner, now: Int64) {
        switch message.string("inReplyTo") {
        case "startRace":
            // Not everyone ready after all: the next `room` message tries again.
            players[index].startSent = false
        case "openRoom", "joinRoom":
            if message.string("code") == "game_in_progress", players[index].state == .lobby {
                // A game of this player's waits (an earlier run's): play it first.
                players[index].outgoing.insert(.resume)
                setState(index, .starting)
                players[index].wsi?.requestWriteable()
            }
        default:
            break
        }
    }

    /// The timer reached a race or watch plan: the message to write now, or nil (nothing to
    /// do any more, or planned again for later).
    func playTogetherDue(_ index: Int, _ planned: VirtualPlayer.Plan, now: Int64) -> VirtualPlayer.Outgoing? {
        switch planned {
        case .openRoom:
            return players[index].state == .lobby ? .openRoom : nil
        case .joinRoom:
            return players[index].state == .lobby && !roomCodes[seating.room(of: index)].isEmpty ? .joinRoom : nil
        case .ready:
            switch players[index].state {
            case .inRoom: return .ready
            case .playing, .starting:
                // The race ended before this racer's own `gameOver` came: ready after it.
                plan(index, .ready, at: now + 500_000)
                return nil
            default: return nil
            }
        case .watch:
            let target = seating.target(ofWatcher: index)
            guard players[index].state == .lobby, players[target].state == .playing else { return nil }
            if isRace, players[target].seat < 0 || roomCodes[seating.room(of: target)].isEmpty { return nil }
            if !isRace, gameIds[target].isEmpty { return nil }
            return .watch
        case .none, .start, .move, .reconnect:
            return nil
        }
    }

    // MARK: - Watchers

    /// A player's step arrived (the first time): note when, for its watchers' lag, and on its
    /// game's first step send the watchers that wait for a game to it.
    func stepRecorded(_ index: Int, step: Int, now: Int64, firstOfGame: Bool) {
        let slot = index * Self.stepRingSize + step % Self.stepRingSize
        stepArrivals[slot] = now
        stepArrivalNumbers[slot] = Int32(truncatingIfNeeded: step)
        guard firstOfGame else { return }
        for watcher in watchersOf[index] where players[watcher].state == .lobby {
            planWatch(watcher, now: now)
        }
    }

    private func planWatch(_ index: Int, now: Int64) {
        plan(index, .watch, at: now + Int64(players[index].bot.spread(below: 200)) * 1000)
    }

    func watcherReceived(_ index: Int, _ message: MessageScanner, now: Int64) {
        statistics.watcherMessages += 1
        statistics.watcherBytes += message.bytes.count
        switch message.kind {
        case .welcome:
            setState(index, .lobby)
            let target = seating.target(ofWatcher: index)
            if players[target].state == .playing, players[target].lastStep > 0 { planWatch(index, now: now) }
        case .watching:
            setState(index, .watching)
            statistics.watchesStarted += 1
            statistics.wholeRun.watchesStarted += 1
            players[index].lastStep = message.integer("step") ?? 0
            // `watching` comes mid-step: the gap to the first step is not a step interval.
            players[index].lastStepAt = 0
            players[index].lastInterval = message.integer("interval") ?? interval
        case .step:
            watcherStep(index, message, now: now)
        case .standings:
            statistics.watcherStandings += 1
        case .watchEnded:
            statistics.watchesEnded += 1
            // Its player's next game (a solo restart, or the rematch) calls it back.
            if players[index].state == .watching { setState(index, .lobby) }
        case .error:
            // A refused watch (the game ended meanwhile, …): wait for the player's next game.
            statistics.serverErrors[message.string("code") ?? "unknown", default: 0] += 1
            statistics.wholeRun.serverErrors[message.string("code") ?? "unknown", default: 0] += 1
        default:
            break
        }
    }

    private func watcherStep(_ index: Int, _ message: MessageScanner, now: Int64) {
        statistics.watcherStepFrames += 1
        guard let step = message.integer("step"), step > players[index].lastStep else { return }  // a revised step
        let safeLanes = message.laneSet("safeLanes") ?? 0
        let watcher = players[index]
        if step == watcher.lastStep + 1, safeLanes != 0, watcher.lastStepAt > 0 {
            let expected = Int64(watcher.lastInterval) * 1000
            statistics.watcherJitters.append(UInt32(clamping: abs(now - watcher.lastStepAt - expected)))
        }
        players[index].lastStep = step
        players[index].lastStepAt = now
        players[index].lastInterval = message.integer("interval") ?? watcher.lastInterval
        // The same step at the player it watches, on this process's one clock.
        let target = seating.target(ofWatcher: index)
        let slot = target * Self.stepRingSize + step % Self.stepRingSize
        if stepArrivalNumbers[slot] == Int32(truncatingIfNeeded: step) {
            statistics.watcherLags.append(UInt32(clamping: max(0, now - stepArrivals[slot])))
        } else if players[target].lastStep < step {
            statistics.watcherFramesFirst += 1
            statistics.watcherLags.append(0)
        }
    }

    /// The progress line's tail in race and watch tests (empty in a solo one, which keeps its line).
    var playTogetherProgress: String {
        guard isRace || hasWatchers else { return "" }
        var parts: [String] = []
        if isRace {
            parts.append("\(statistics.wholeRun.roomsOpened) rooms opened, \(statistics.wholeRun.racesStarted) races started")
        }
        if hasWatchers {
            parts.append("\(stateCount(.watching)) of \(options.watchers) watchers watching")
        }
        return ", " + parts.joined(separator: ", ")
    }
}
