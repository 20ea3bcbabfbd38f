import RetroRapidStorageFixtures
import Testing

/// `make test` runs the contract suite against PostgreSQL too; without a test server the
/// PostgreSQL half would drop out silently, so a run that requires it fails here instead.
@Suite struct PostgreSQLAvailabilityTests {
    @Test func aRunThatRequiresPostgreSQLHasAServer() {
        if TestPostgres.isRequired {
            #expect(TestPostgres.isAvailable, "RETRORAPID_REQUIRE_POSTGRES=1 but RETRORAPID_TEST_POSTGRES_URL is not set: start the tests with scripts/with-test-postgres.sh")
            #expect(StorageBackends.all.map(\.description) == ["SQLite", "PostgreSQL"])
        }
    }
}
