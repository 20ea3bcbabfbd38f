import Foundation
@testable import RetroRapidDomain
import RetroRapidStorageFixtures
import Testing

/// Money: a value, tested without any storage.
@Suite struct MoneyTests {
    static let gbp299 = Money(minorUnits: 299, currency: "GBP")
    static let gbp99 = Money(minorUnits: 99, currency: "GBP")

    @Test func moneyIsParsedAndShownWithoutFloatingPoint() {
        #expect(Money(decimal: "0.99", currency: "GBP") == Self.gbp99)
        #expect(Money(decimal: "2.99", currency: "gbp") == Self.gbp299)
        #expect(Money(decimal: "2", currency: "GBP")?.minorUnits == 200)
        #expect(Money(decimal: "1.5", currency: "EUR")?.minorUnits == 150)
        #expect(Money(decimal: "500", currency: "JPY")?.minorUnits == 500)
        #expect(Money(decimal: "1.234", currency: "KWD")?.minorUnits == 1234)
        for bad in ["", ".99", "0.", "0.999", "-1", "1,50", "1e2", "abc", "99999999999999999999"] {
            #expect(Money(decimal: bad, currency: "GBP") == nil, "\(bad)")
        }
        #expect(Money(decimal: "1.5", currency: "JPY") == nil)
        #expect(Self.gbp99.description == "£0.99")
        #expect(Self.gbp299.description == "£2.99")
        #expect(Money(minorUnits: 1205, currency: "EUR").description == "€12.05")
        #expect(Money(minorUnits: 500, currency: "JPY").description == "500 JPY")
        #expect(Money(minorUnits: 7, currency: "CHF").description == "0.07 CHF")
    }
}
