import Foundation
import RetroRapidDomain
import RetroRapidSQLite
import RetroRapidStorageFixtures
import Testing

/// Money, the value orders are priced in. The order rules are in
/// Tests/RetroRapidStorageTests/OrderRepositoryContractTests.swift.
@Suite struct SQLiteOrderRepositoryTests {
    static let gbp299 = Money(minorUnits: 299, currency: "GBP")
    static let gbp99 = Money(minorUnits: 99, currency: "GBP")
}
