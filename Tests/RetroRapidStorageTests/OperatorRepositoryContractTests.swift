import Foundation
import RetroRapidDomain
import RetroRapidStorageFixtures
import Testing

/// The contract of `OperatorRepository`, run against every backend in `StorageBackends.all`.
@Suite struct OperatorRepositoryContractTests {
    /// Few rounds: these tests are about the accounts, not the hash (OperatorPasswordTests).
    static func hash(_ password: String) -> String { OperatorPassword.hash(password, iterations: 10) }

    @Test(arguments: StorageBackends.all) func anAccountIsAddedListedAndItsNameNeverReused(_ backend: BackendUnderTest) throws {
        try withStore(backend) { store in
            let operators = store.repositories().operators
            let added = try operators.add(name: " Ada.L ", role: .admin, passwordHash: Self.hash("first"), now: utc("2026-01-01T09:00:00Z"))
            #expect(added.name == "ada.l" && added.role == .admin && !added.isDisabled)
            #expect(added.createdAt == utc("2026-01-01T09:00:00Z") && added.passwordSetAt == added.createdAt)
            try operators.add(name: "night-shift", role: .viewer, passwordHash: Self.hash("second"), now: utc("2026-01-02T09:00:00Z"))
            #expect(try operators.list().map(\.name) == ["ada.l", "night-shift"])
            let (account, stored) = try operators.account(named: "ADA.L")
            #expect(account == added && OperatorPassword.matches("first", stored: stored))

            let before = try store.dump()
            try operators.disable(name: "ada.l", now: utc("2026-01-03T09:00:00Z"))
            let afterDisable = try store.dump()
            for spelling in ["ada.l", "ADA.L", " Ada.l"] {
                let error = #expect(throws: StoreError.self) {
                    try operators.add(name: spelling, role: .viewer, passwordHash: Self.hash("again"), now: utc("2026-01-04T09:00:00Z"))
                }
                #expect(error?.code == .conflict && error?.field == "name")
            }
            #expect(try store.dump() == afterDisable && afterDisable != before)
        }
    }

    @Test(arguments: StorageBackends.all) func badInputIsRefusedAndChangesNothing(_ backend: BackendUnderTest) throws {
        try withStore(backend) { store in
            let operators = store.repositories().operators
            let now = utc("2026-01-01T09:00:00Z")
            try operators.add(name: "ada", role: .admin, passwordHash: Self.hash("first"), now: now)
            let before = try store.dump()
            let attempts: [(String, StoreError.Code, () throws -> Void)] = [
                ("name", .invalid, { _ = try operators.add(name: "a", role: .viewer, passwordHash: Self.hash("x"), now: now) }),
                ("name", .invalid, { _ = try operators.add(name: "ada lovelace", role: .viewer, passwordHash: Self.hash("x"), now: now) }),
                // A password in clear, passed by mistake where its hash belongs.
                ("passwordHash", .invalid, { _ = try operators.add(name: "bob", role: .viewer, passwordHash: "K7Q4M-2XD9P", now: now) }),
                ("passwordHash", .invalid, { _ = try operators.resetPassword(name: "ada", passwordHash: "hunter2", now: now) }),
                ("name", .notFound, { _ = try operators.disable(name: "nobody", now: now) }),
                ("name", .notFound, { _ = try operators.resetPassword(name: "nobody", passwordHash: Self.hash("x"), now: now) }),
                ("name", .notFound, { _ = try operators.account(named: "nobody") }),
            ]
            for (field, code, attempt) in attempts {
                let error = #expect(throws: StoreError.self, "\(field) \(code)") { try attempt() }
                #expect(error?.code == code && error?.field == field)
            }
            #expect(try store.dump() == before)
        }
    }

    @Test(arguments: StorageBackends.all) func aResetReplacesThePasswordAndADisabledAccountStaysDisabled(_ backend: BackendUnderTest) throws {
        try withStore(backend) { store in
            let operators = store.repositories().operators
            try operators.add(name: "ada", role: .admin, passwordHash: Self.hash("first"), now: utc("2026-01-01T09:00:00Z"))
            let reset = try operators.resetPassword(name: "ada", passwordHash: Self.hash("second"), now: utc("2026-01-05T09:00:00Z"))
            #expect(reset.passwordSetAt == utc("2026-01-05T09:00:00Z") && reset.createdAt == utc("2026-01-01T09:00:00Z"))
            let stored = try operators.account(named: "ada").passwordHash
            #expect(OperatorPassword.matches("second", stored: stored) && !OperatorPassword.matches("first", stored: stored))

            let disabled = try operators.disable(name: "ada", now: utc("2026-01-06T09:00:00Z"))
            #expect(disabled.disabledAt == utc("2026-01-06T09:00:00Z"))
            // Disabling again changes nothing, not even the time.
            #expect(try operators.disable(name: "ada", now: utc("2026-01-07T09:00:00Z")).disabledAt == utc("2026-01-06T09:00:00Z"))
            let before = try store.dump()
            let error = #expect(throws: StoreError.self) {
                try operators.resetPassword(name: "ada", passwordHash: Self.hash("third"), now: utc("2026-01-08T09:00:00Z"))
            }
            #expect(error?.code == .conflict)
            #expect(try store.dump() == before)
        }
    }
}
