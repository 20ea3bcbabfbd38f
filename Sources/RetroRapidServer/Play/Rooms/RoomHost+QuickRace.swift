// RoomHost, the quick race: `quickRace` and `leaveQueue`, the queue's news, the room it forms.
// Threading rule: service thread only, as all of RoomHost (RoomHost.swift), the worker's completions included.

import RetroRapidLWS
import RetroRapidRules

extension RoomHost {
    // MARK: - Quick race

    func quickRace(level: SpeedLevel, for identity: WebSocketConnection.Identity, on connection: WebSocketConnection) {
        let type = "quickRace"
        if matchHost.shuttingDown { return refuse(connection, shuttingDownError(type)) }
        if let refusal = refusalToEnter(identity, type: type) { return refuse(connection, refusal) }
        do throws(RoomRefusal) {
            let formed = try queue.join(playerID: identity.playerID, name: identity.displayName, level: level,
                                        now: MonotonicClock.now())
            queueConnection[identity.playerID] = connection.id
            if let formed { form(formed) } else { sendQueue(level) }
        } catch let refusal {
            refuse(connection, refusal.error(inReplyTo: type))
        }
        rescheduleQueue()
    }

    func leaveQueue(for identity: WebSocketConnection.Identity, on connection: WebSocketConnection) {
        do throws(RoomRefusal) {
            let level = try queue.leave(playerID: identity.playerID)
            queueConnection[identity.playerID] = nil
            var view = QueueView(level: level, waiting: 0, startsInMilliseconds: nil)
            view.left = true
            connections.send(.queue(view), to: connection)
            sendQueue(level)
        } catch let refusal {
            refuse(connection, refusal.error(inReplyTo: "leaveQueue"))
        }
        rescheduleQueue()
    }

    /// Every waiting player at the level hears how many wait and how long until the room forms.
    func sendQueue(_ level: SpeedLevel) {
        let now = MonotonicClock.now()
        let waiting = queue.players(at: level)
        let view = QueueView(level: level, waiting: waiting.count,
                             startsInMilliseconds: queue.startsAt(level).map { Int(max(0, $0 - now) / 1000) })
        for player in waiting {
            if let connection = queueConnection[player.playerID].flatMap({ connections[$0] }) { connections.send(.queue(view), to: connection) }
        }
    }

    /// A quick room of the players the queue gave, already counting down (everyone ready).
    func form(_ formed: QuickRaceQueue.Formed) {
        let players = formed.players.filter { queueConnection[$0.playerID].flatMap { connections[$0] } != nil }
        let queueConnectionIDs = queueConnection
        for player in formed.players { queueConnection[player.playerID] = nil }
        guard players.count >= 2, let first = players.first,
              let room = try? registry.open(level: formed.level, seats: QuickRaceQueue.roomSize, practice: false, quick: true,
                                            hostID: first.playerID, hostName: first.name)
        else {
            logger.warning("a quick race could not form", metadata: ["game.level": formed.level.rawValue])
            return
        }
        opened(room)
        for player in players.dropFirst() {
            _ = try? registry.join(typed: room.code.text, playerID: player.playerID, name: player.name)
        }
        // Only those still connected were seated; their connections carry the room from now on.
        for player in players { roomConnection[player.playerID] = queueConnectionIDs[player.playerID] }
        room.readyEveryone()
        logger.info("quick race formed", metadata: ["room.code": room.code.text, "race.racers": String(players.count)])
        begin(room, racers: room.racers)
    }

    func rescheduleQueue() {
        if let deadline = queue.nextDeadline { scheduler.schedule(Self.queueTimerID, at: deadline) } else {
            scheduler.cancel(Self.queueTimerID)
        }
    }
}
