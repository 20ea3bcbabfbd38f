// RoomHost, rooms in a cluster: a new room's code placed on this node, another node's room found.
// Threading rule: service thread only, as all of RoomHost (RoomHost.swift), the worker's completions included.

import RetroRapidDomain

extension RoomHost {
    // MARK: - Rooms in a cluster

    /// This node's name in a cluster; nil on a single server (no places written).
    var nodeID: String? { matchHost.role.nodeID }

    /// Places the new room's code on this node (`room_places`), then sends its `room`. A code a
    /// live node holds already is drawn again (the room is reopened under a new code, `attempts`
    /// times); on a single server there is nothing to place.
    func place(_ room: RaceRoom, attempts: Int) {
        guard let nodeID else { return sendRoom(room) }
        let (code, lease) = (room.code, matchHost.role.lease)
        worker.perform({ storage in
            try storage.roomPlaces.place(code: code.text, nodeID: nodeID, now: storage.now, lease: lease)
        }, then: { [self] result in
            guard let room = registry.room(code) else { return }
            switch result {
            case .success(true):
                sendRoom(room)
            case .success(false) where attempts > 1:
                guard let hostRacer = room.hostRacer, let connection = connectionOf(hostRacer.playerID) else { return }
                _ = try? registry.leave(playerID: hostRacer.playerID)
                closedRoom(room)
                guard let again = try? registry.open(level: room.level, seats: room.seats, practice: room.practice,
                                                     quick: room.quick, hostID: hostRacer.playerID, hostName: hostRacer.name) else { return }
                opened(again)
                roomConnection[hostRacer.playerID] = connection.id
                place(again, attempts: attempts - 1)
            case .success(false), .failure:
                if case .failure(let error) = result {
                    logger.error("could not place a room", metadata: ["room.code": code.text, "error": "\(error)"])
                }
                let receivers = room.racers.compactMap { connectionOf($0.playerID) }
                for racer in room.racers { _ = try? registry.leave(playerID: racer.playerID) }
                closedRoom(room)
                for connection in receivers {
                    connections.refuse(connection, ProtocolError(.unavailable,
                        "The room could not be opened just now; nothing was used up. Try again.", inReplyTo: "openRoom"))
                }
            }
        })
    }

    /// The node that holds `code`'s room, if another live node does (cluster mode).
    func lookUpPlace(_ code: RoomCode, then answer: @escaping @Sendable (String?) -> Void) {
        guard let nodeID else { return answer(nil) }
        let lease = matchHost.role.lease
        worker.perform({ storage in
            try storage.roomPlaces.place(ofCode: code.text, now: storage.now, lease: lease)?.nodeID
        }, then: { result in
            guard case .success(let node?) = result, node != nodeID else { return answer(nil) }
            answer(node)
        })
    }
}
