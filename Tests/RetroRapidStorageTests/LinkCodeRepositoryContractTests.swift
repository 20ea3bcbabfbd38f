import Foundation
import RetroRapidDomain
import RetroRapidStorageFixtures
import Testing

/// The contract of `LinkCodeRepository`, run against every backend in `StorageBackends.all`.
@Suite struct LinkCodeRepositoryContractTests {
    /// 2026-01-15T10:00:00Z: tests pass time in, so nothing depends on the clock.
    let t0 = Date(timeIntervalSince1970: 1_768_471_200)

    func at(_ seconds: TimeInterval) -> Date { t0.addingTimeInterval(seconds) }

    /// A player with one signed-in device "Laptop", created at t0.
    func signedInPlayer(_ storage: StorageRepositories, name: String = "Ada") throws -> (device: AuthenticatedDevice, token: String) {
        let (_, token) = try storage.players.createPlayer(displayName: name, deviceLabel: "Laptop", now: t0)
        return (try storage.players.authenticate(token: token, now: t0), token)
    }

    @Test(arguments: StorageBackends.all) func entryIgnoresCaseDashesAndSpacesAndReadsOAsZeroAndILAsOne(_ backend: BackendUnderTest) throws {
        try withStore(backend) { store in
            let codes = store.repositories(RepositorySettings(linkCodes: .init(maximumPerWindow: 10_000))).linkCodes
            let ada = try signedInPlayer(store.repositories())
            let variants: [(String) -> String] = [
                { $0.lowercased() },
                { $0.replacingOccurrences(of: "-", with: "") },
                { " " + $0.lowercased().replacingOccurrences(of: "-", with: " - ") + " " },
                { $0.replacingOccurrences(of: "0", with: "o").replacingOccurrences(of: "1", with: "l") },
                { $0.replacingOccurrences(of: "0", with: "O").replacingOccurrences(of: "1", with: "I") },
                { $0.replacingOccurrences(of: "1", with: "L") },
            ]
            for (index, variant) in zip(variants.indices, variants) {
                // Codes are random: draw until this spelling really differs from the code shown
                // (a code with a 0 or 1 for the O/I/L spellings), so no case passes vacuously.
                var issued = try codes.createCode(for: ada.device, now: t0)
                while variant(issued.code) == issued.code {
                    issued = try codes.createCode(for: ada.device, now: t0)
                }
                let (player, _) = try codes.claim(code: variant(issued.code), deviceLabel: "Device \(index)", now: at(1))
                #expect(player == ada.device.player)
            }
        }
    }

    @Test(arguments: StorageBackends.all) func malformedUnknownUsedAndExpiredCodesAreRefusedAndChangeNothing(_ backend: BackendUnderTest) throws {
        try withStore(backend) { store in
            let codes = store.repositories().linkCodes
            let ada = try signedInPlayer(store.repositories())
            let used = try codes.createCode(for: ada.device, now: t0)
            _ = try codes.claim(code: used.code, deviceLabel: "Phone", now: at(10))
            let old = try codes.createCode(for: ada.device, now: at(20))
            let live = try codes.createCode(for: ada.device, now: at(20))

            let before = try store.dump()
            let expectations: [(String, String, StoreError.Code, String)] = [
                ("K7Q4-M2X", "Tablet", .invalid, "8 letters and digits"),
                ("ZZZZ-ZZZZ", "Tablet", .notFound, "No link code matches"),
                (used.code, "Tablet", .expired, "only once"),
                (old.code, "Tablet", .expired, "expired"),
                (live.code, "Tab\u{202E}let", .invalid, "device label"),
            ]
            for (code, label, expected, words) in expectations {
                let error = #expect(throws: StoreError.self) { try codes.claim(code: code, deviceLabel: label, now: at(620)) }
                #expect(error?.code == expected, "\(code)")
                #expect(error?.message.contains(words) == true, "\(error?.message ?? "no error") should say \(words)")
            }
            #expect(try store.dump() == before)
        }
    }

    @Test(arguments: StorageBackends.all) func codeWorksUntilItsLifetimeEndsAndLifetimeIsAParameter(_ backend: BackendUnderTest) throws {
        try withStore(backend) { store in
            let codes = store.repositories().linkCodes
            let ada = try signedInPlayer(store.repositories())
            let first = try codes.createCode(for: ada.device, now: t0)
            let second = try codes.createCode(for: ada.device, now: t0)
            _ = try codes.claim(code: first.code, deviceLabel: "", now: at(599))
            let late = #expect(throws: StoreError.self) { try codes.claim(code: second.code, deviceLabel: "", now: at(600)) }
            #expect(late?.code == .expired)
            #expect(late?.message.contains("10 minutes") == true)

            let brief = store.repositories(RepositorySettings(linkCodes: .init(lifetime: 120))).linkCodes
            let short = try brief.createCode(for: ada.device, now: at(1000))
            #expect(short.expiresAt == at(1120))
            let error = #expect(throws: StoreError.self) { try brief.claim(code: short.code, deviceLabel: "", now: at(1120)) }
            #expect(error?.message.contains("2 minutes") == true)
        }
    }

    @Test(arguments: StorageBackends.all) func creationIsRateLimitedPerPlayerWithARetryTime(_ backend: BackendUnderTest) throws {
        try withStore(backend) { store in
            let codes = store.repositories().linkCodes
            let ada = try signedInPlayer(store.repositories())
            let bob = try signedInPlayer(store.repositories(), name: "Bob")

            for minute in 0..<5 {
                #expect(try codes.retryAfter(playerID: ada.device.player.id, now: at(Double(minute) * 60)) == nil)
                _ = try codes.createCode(for: ada.device, now: at(Double(minute) * 60))
            }
            let before = try store.dump()
            let error = #expect(throws: StoreError.self) { try codes.createCode(for: ada.device, now: at(300)) }
            #expect(error?.code == .rateLimited)
            #expect(error?.message.contains("Try again in 5 minutes") == true)
            #expect(try codes.retryAfter(playerID: ada.device.player.id, now: at(300)) == 300)
            #expect(try store.dump() == before)

            // Another player is not held back by Ada's codes.
            _ = try codes.createCode(for: bob.device, now: at(300))

            // At t0 + 10 min the first code leaves the window; then the one from minute 1 is the
            // oldest of 5 again, and leaves at t0 + 11 min.
            _ = try codes.createCode(for: ada.device, now: at(600))
            let again = #expect(throws: StoreError.self) { try codes.createCode(for: ada.device, now: at(601)) }
            #expect(again?.code == .rateLimited)
            #expect(again?.message.contains("Try again in 59 seconds") == true)
            #expect(try codes.retryAfter(playerID: ada.device.player.id, now: at(601)) == 59)
            _ = try codes.createCode(for: ada.device, now: at(660))
        }
    }

    @Test(arguments: StorageBackends.all) func revokedDeviceCannotCreateAndItsUnclaimedCodesStopWorking(_ backend: BackendUnderTest) throws {
        try withStore(backend) { store in
            let players = store.repositories().players
            let codes = store.repositories().linkCodes
            let ada = try signedInPlayer(store.repositories())
            let (_, phoneToken) = try codes.claim(code: try codes.createCode(for: ada.device, now: t0).code, deviceLabel: "Phone", now: at(1))
            _ = try players.authenticate(token: phoneToken, now: at(2))
            let pending = try codes.createCode(for: ada.device, now: at(3))

            try players.revokeDevice(playerID: ada.device.player.id, deviceID: ada.device.deviceID, now: at(4))
            let before = try store.dump()
            let claim = #expect(throws: StoreError.self) { try codes.claim(code: pending.code, deviceLabel: "Thief", now: at(5)) }
            #expect(claim?.code == .expired)
            #expect(claim?.message.contains("signed out") == true)
            let create = #expect(throws: StoreError.self) { try codes.createCode(for: ada.device, now: at(6)) }
            #expect(create?.code == .unauthorized)
            #expect(try store.dump() == before)
        }
    }

    @Test(arguments: StorageBackends.all) func codeLooksRightAndClaimGivesANewDeviceOfTheSamePlayer(_ backend: BackendUnderTest) throws {
        try withStore(backend) { store in
            let repositories = store.repositories()
            let players = repositories.players
            let codes = repositories.linkCodes
            let ada = try signedInPlayer(repositories)

            let issued = try codes.createCode(for: ada.device, now: at(0.5))
            #expect(issued.code.wholeMatch(of: /[0-9A-HJKMNP-TV-Z]{4}-[0-9A-HJKMNP-TV-Z]{4}/) != nil)
            #expect(issued.expiresAt == at(600))

            let (player, token) = try codes.claim(code: issued.code, deviceLabel: "Phone", now: at(30))
            #expect(player == ada.device.player)
            #expect(token != ada.token)
            #expect(token.count == 43)
            let phone = try players.authenticate(token: token, now: at(31))
            #expect(phone.player == ada.device.player)
            #expect(phone.deviceID != ada.device.deviceID)
            #expect(try players.devices(playerID: player.id).map(\.label) == ["Laptop", "Phone"])
        }
    }

    @Test(arguments: StorageBackends.all) func codesAreForgottenADayAfterTheyExpire(_ backend: BackendUnderTest) throws {
        try withStore(backend) { store in
            let repositories = store.repositories()
            let codes = repositories.linkCodes
            let ada = try signedInPlayer(repositories)
            let bob = try signedInPlayer(repositories, name: "Bob")
            let old = try codes.createCode(for: ada.device, now: t0)
            let bobs = try codes.createCode(for: bob.device, now: t0)
            let kept = try codes.createCode(for: ada.device, now: at(60))

            // Ada's first code expired at t0 + 10 min; a day later it goes when she creates one.
            // Expired but remembered is "expired"; forgotten is "not found".
            let fresh = try codes.createCode(for: ada.device, now: at(600 + 86_400 + 1))
            let later = at(600 + 86_400 + 2)
            let othersKept = #expect(throws: StoreError.self) { try codes.claim(code: bobs.code, deviceLabel: "", now: later) }
            #expect(othersKept?.code == .expired)  // only Ada's own old codes go
            let remembered = #expect(throws: StoreError.self) { try codes.claim(code: kept.code, deviceLabel: "", now: later) }
            #expect(remembered?.code == .expired)
            let forgotten = #expect(throws: StoreError.self) { try codes.claim(code: old.code, deviceLabel: "", now: later) }
            #expect(forgotten?.code == .notFound)
            #expect(try codes.claim(code: fresh.code, deviceLabel: "Phone", now: later).player == ada.device.player)
        }
    }
}
