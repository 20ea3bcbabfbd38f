import Foundation
import RetroRapidDomain
import RetroRapidStorageFixtures
import Testing

/// The contract of `PlayerRepository`, run against every backend in `StorageBackends.all`.
@Suite struct PlayerRepositoryContractTests {
    let t0 = Date(timeIntervalSince1970: 1_768_471_200)

    @Test(arguments: StorageBackends.all) func signingInAgainWithinFiveMinutesWritesNothing(_ backend: BackendUnderTest) throws {
        try withStore(backend) { store in
            let players = store.repositories().players
            let (player, token) = try players.createPlayer(displayName: nil, deviceLabel: "", now: t0)
            let before = try store.dump()
            _ = try players.authenticate(token: token, now: t0.addingTimeInterval(Device.lastSeenResolution - 1))
            #expect(try store.dump() == before)
            let later = try players.authenticate(token: token, now: t0.addingTimeInterval(Device.lastSeenResolution))
            #expect(try players.devices(playerID: player.id, currentDeviceID: later.deviceID).first?.lastSeenAt
                    == t0.addingTimeInterval(Device.lastSeenResolution))
        }
    }

    @Test(arguments: StorageBackends.all) func wrongUnknownAndMalformedTokensAreUnauthorizedAndChangeNothing(_ backend: BackendUnderTest) throws {
        try withStore(backend) { store in
            let players = store.repositories().players
            let (_, token) = try players.createPlayer(displayName: nil, deviceLabel: "", now: t0)
            let before = try store.dump()
            for wrong in [DeviceToken.generate().text, String(token.dropLast()), token + "x", token.uppercased() == token ? token.lowercased() : token.uppercased(), ""] {
                let error = #expect(throws: StoreError.self) { try players.authenticate(token: wrong, now: t0.addingTimeInterval(60)) }
                #expect(error?.code == .unauthorized)
            }
            #expect(try store.dump() == before)
            _ = try players.authenticate(token: token, now: t0.addingTimeInterval(360))
            #expect(try store.dump() != before)  // last_seen_at moved: the dump does see changes
        }
    }

    @Test(arguments: StorageBackends.all) func publicIDAndDefaultNameLookRight(_ backend: BackendUnderTest) throws {
        try withStore(backend) { store in
            let players = store.repositories().players
            let crockford = Set(LinkCode.alphabet)
            var ids = Set<String>()
            for _ in 0..<20 {
                let (player, _) = try players.createPlayer(displayName: nil, deviceLabel: "", now: t0)
                #expect(player.publicID.count == 12)
                #expect(player.publicID.allSatisfy { crockford.contains($0) })
                #expect(player.displayName.wholeMatch(of: /Racer [0-9]{4}/) != nil)
                ids.insert(player.publicID)
                #expect(try players.player(publicID: player.publicID) == player)
                #expect(try players.player(publicID: player.publicID.lowercased()) == player)
                #expect(try players.player(id: player.id) == player)
            }
            #expect(ids.count == 20)
            #expect(!LinkCode.alphabet.contains { "ILOU".contains($0) })
            let error = #expect(throws: StoreError.self) { try players.player(publicID: "0000000000ZZ") }
            #expect(error?.code == .notFound)
        }
    }

    @Test(arguments: StorageBackends.all) func setDisplayNameValidatesAndRefusalChangesNothing(_ backend: BackendUnderTest) throws {
        try withStore(backend) { store in
            let players = store.repositories().players
            let (player, _) = try players.createPlayer(displayName: "Ada", deviceLabel: "", now: t0)
            let renamed = try players.setDisplayName(playerID: player.id, name: "  Ada L ")
            #expect(renamed.displayName == "Ada L")
            #expect(try players.player(id: player.id).displayName == "Ada L")

            let before = try store.dump()
            let invalid = #expect(throws: StoreError.self) { try players.setDisplayName(playerID: player.id, name: "Ada\u{200D}") }
            #expect(invalid?.code == .invalid)
            #expect(invalid?.field == "displayName")
            let missing = #expect(throws: StoreError.self) { try players.setDisplayName(playerID: player.id + 1000, name: "Grace") }
            #expect(missing?.code == .notFound)
            #expect(try store.dump() == before)
        }
    }
}
