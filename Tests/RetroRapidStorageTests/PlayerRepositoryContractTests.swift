import Foundation
import RetroRapidDomain
import RetroRapidStorageFixtures
import Testing

/// The contract of `PlayerRepository`, run against every backend in `StorageBackends.all`.
@Suite struct PlayerRepositoryContractTests {
    let t0 = Date(timeIntervalSince1970: 1_768_471_200)

    /// A player with a laptop (created at t0) and a phone linked at t0 + 10 s.
    func playerWithTwoDevices(_ storage: StorageRepositories) throws -> (player: Player, laptop: AuthenticatedDevice, laptopToken: String, phone: AuthenticatedDevice, phoneToken: String) {
        let players = storage.players
        let (player, laptopToken) = try players.createPlayer(displayName: "Ada", deviceLabel: "Laptop", now: t0)
        let laptop = try players.authenticate(token: laptopToken, now: t0)
        let code = try storage.linkCodes.createCode(for: laptop, now: t0)
        let (_, phoneToken) = try storage.linkCodes.claim(code: code.code, deviceLabel: "Phone", now: t0.addingTimeInterval(10))
        let phone = try players.authenticate(token: phoneToken, now: t0.addingTimeInterval(10))
        return (player, laptop, laptopToken, phone, phoneToken)
    }

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

    @Test(arguments: StorageBackends.all) func devicesAreListedOldestFirstWithTheCallersMarked(_ backend: BackendUnderTest) throws {
        try withStore(backend) { store in
            let players = store.repositories().players
            let ada = try playerWithTwoDevices(store.repositories())
            _ = try players.createPlayer(displayName: "Someone Else", deviceLabel: "Other", now: t0)

            let list = try players.devices(playerID: ada.player.id, currentDeviceID: ada.phone.deviceID)
            #expect(list.map(\.label) == ["Laptop", "Phone"])
            #expect(list.map(\.id) == [ada.laptop.deviceID, ada.phone.deviceID])
            #expect(list.map(\.isCurrent) == [false, true])
            #expect(list.map(\.createdAt) == [t0, t0.addingTimeInterval(10)])
            #expect(list.allSatisfy { !$0.isRevoked })
            #expect(try players.devices(playerID: ada.player.id).allSatisfy { !$0.isCurrent })
            let unknown = #expect(throws: StoreError.self) { try players.devices(playerID: 9999) }
            #expect(unknown?.code == .notFound)
        }
    }

    @Test(arguments: StorageBackends.all) func revokedDeviceIsListedAsRevokedAndItsTokenIsRefused(_ backend: BackendUnderTest) throws {
        try withStore(backend) { store in
            let players = store.repositories().players
            let ada = try playerWithTwoDevices(store.repositories())

            try players.revokeDevice(playerID: ada.player.id, deviceID: ada.laptop.deviceID, now: t0.addingTimeInterval(20))
            let list = try players.devices(playerID: ada.player.id, currentDeviceID: ada.phone.deviceID)
            #expect(list.map(\.revokedAt) == [t0.addingTimeInterval(20), nil])

            let error = #expect(throws: StoreError.self) { try players.authenticate(token: ada.laptopToken, now: t0.addingTimeInterval(30)) }
            #expect(error?.code == .unauthorized)
            #expect(error?.message.contains("signed out") == true)
            #expect(try players.authenticate(token: ada.phoneToken, now: t0.addingTimeInterval(30)).player == ada.player)

            // Revoking again succeeds and keeps the first time.
            try players.revokeDevice(playerID: ada.player.id, deviceID: ada.laptop.deviceID, now: t0.addingTimeInterval(40))
            #expect(try players.devices(playerID: ada.player.id).first?.revokedAt == t0.addingTimeInterval(20))
        }
    }

    @Test(arguments: StorageBackends.all) func anotherPlayersDeviceIsNotFoundAndNothingChanges(_ backend: BackendUnderTest) throws {
        try withStore(backend) { store in
            let players = store.repositories().players
            let ada = try playerWithTwoDevices(store.repositories())
            let (mallory, malloryToken) = try players.createPlayer(displayName: "Mallory", deviceLabel: "", now: t0)
            _ = try players.authenticate(token: malloryToken, now: t0)

            let before = try store.dump()
            for deviceID in [ada.laptop.deviceID, ada.phone.deviceID] {
                let error = #expect(throws: StoreError.self) {
                    try players.revokeDevice(playerID: mallory.id, deviceID: deviceID, now: t0.addingTimeInterval(60), allowingLastDevice: true)
                }
                #expect(error?.code == .notFound)
            }
            let unknown = #expect(throws: StoreError.self) { try players.revokeDevice(playerID: ada.player.id, deviceID: 9999, now: t0) }
            #expect(unknown?.code == .notFound)
            #expect(try store.dump() == before)
            #expect(try players.authenticate(token: ada.laptopToken, now: t0.addingTimeInterval(70)).player == ada.player)
        }
    }

    @Test(arguments: StorageBackends.all) func lastActiveDeviceIsRefusedUnlessTheOperatorInsists(_ backend: BackendUnderTest) throws {
        try withStore(backend) { store in
            let players = store.repositories().players
            let ada = try playerWithTwoDevices(store.repositories())
            try players.revokeDevice(playerID: ada.player.id, deviceID: ada.laptop.deviceID, now: t0.addingTimeInterval(20))

            let before = try store.dump()
            let error = #expect(throws: StoreError.self) {
                try players.revokeDevice(playerID: ada.player.id, deviceID: ada.phone.deviceID, now: t0.addingTimeInterval(30))
            }
            #expect(error?.code == .conflict)
            #expect(error?.message.contains("link another device first") == true)
            #expect(try store.dump() == before)
            #expect(try players.authenticate(token: ada.phoneToken, now: t0.addingTimeInterval(31)).deviceID == ada.phone.deviceID)

            // The operator's CLI may lock out a stolen only device.
            try players.revokeDevice(playerID: ada.player.id, deviceID: ada.phone.deviceID, now: t0.addingTimeInterval(40), allowingLastDevice: true)
            let locked = #expect(throws: StoreError.self) { try players.authenticate(token: ada.phoneToken, now: t0.addingTimeInterval(50)) }
            #expect(locked?.code == .unauthorized)
        }
    }

    @Test(arguments: StorageBackends.all) func tokenIs43URLSafeCharactersOf32Bytes(_ backend: BackendUnderTest) throws {
        try withStore(backend) { store in
            let players = store.repositories().players
            let (_, token) = try players.createPlayer(displayName: "Ada", deviceLabel: "Laptop", now: t0)
            #expect(token.count == 43)
            #expect(token.allSatisfy { Set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_").contains($0) })
            #expect(DeviceToken(parsing: token) != nil)  // 32 bytes in their canonical spelling
        }
    }

    @Test(arguments: StorageBackends.all) func createdPlayerAuthenticatesWithItsTokenAndLastSeenMoves(_ backend: BackendUnderTest) throws {
        try withStore(backend) { store in
            let players = store.repositories().players
            let (player, token) = try players.createPlayer(displayName: " Ada ", deviceLabel: "Laptop", now: t0.addingTimeInterval(0.75))
            #expect(player.displayName == "Ada")
            #expect(player.createdAt == t0)
            #expect(try players.player(id: player.id).createdAt == t0)

            let signedIn = try players.authenticate(token: token, now: t0.addingTimeInterval(390))
            #expect(signedIn.player == player)
            let devices = try players.devices(playerID: player.id, currentDeviceID: signedIn.deviceID)
            #expect(devices.map(\.id) == [signedIn.deviceID])
            #expect(devices.first?.lastSeenAt == t0.addingTimeInterval(390))
            #expect(devices.first?.createdAt == t0)
            #expect(devices.first?.label == "Laptop")
            #expect(devices.first?.isCurrent == true)
            #expect(devices.first?.isRevoked == false)
        }
    }

    @Test(arguments: StorageBackends.all) func refusedNameOrLabelCreatesNothing(_ backend: BackendUnderTest) throws {
        try withStore(backend) { store in
            let players = store.repositories().players
            let before = try store.dump()
            let badName = #expect(throws: StoreError.self) { try players.createPlayer(displayName: "Bob\u{202E}", deviceLabel: "Laptop", now: t0) }
            #expect(badName?.code == .invalid)
            #expect(badName?.field == "displayName")
            let badLabel = #expect(throws: StoreError.self) { try players.createPlayer(displayName: "Bob", deviceLabel: "Lap\ttop", now: t0) }
            #expect(badLabel?.field == "deviceLabel")
            let longLabel = #expect(throws: StoreError.self) { try players.createPlayer(displayName: "Bob", deviceLabel: String(repeating: "x", count: 65), now: t0) }
            #expect(longLabel?.field == "deviceLabel")
            #expect(try store.dump() == before)
            // A label may hold any visible text, emoji included: only its player sees it.
            let (bob, _) = try players.createPlayer(displayName: "Bob", deviceLabel: "📱 Phone (Zoë's)", now: t0)
            #expect(try players.devices(playerID: bob.id).map(\.label) == ["📱 Phone (Zoë's)"])
        }
    }
}
