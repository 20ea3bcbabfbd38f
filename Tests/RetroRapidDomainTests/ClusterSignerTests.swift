import RetroRapidDomain
import Testing

/// Signing and checking bus messages: only a holder of the cluster secret makes a payload a
/// node acts on, and only once, and only while it is fresh.
@Suite("Cluster messages signed with the cluster secret")
struct ClusterSignerTests {
    static let secret = "k6Jd0cQv3mZ8yTn1LrW5pXb7HsA2eFg4Uo9Vi-current"
    static let other = "Qm2Zt7Lw4Xp9Nc1Rv8Ks3Hd6Jb5Yf0Ga-the-next-one"
    static let now: Int64 = 1_750_000_000_000
    static let revoke = ClusterEnvelope(sender: "node-a", message: .deviceRevoked(playerID: 7, deviceID: 9))
    static let stamp = ClusterStamp(boot: 0x0123_4567_89ab_cdef, sequence: 1, sentAt: now)

    static func signer(_ current: String = secret, previous: String? = nil, channel: String = "retrorapid_cluster") throws -> ClusterSigner {
        ClusterSigner(secrets: try ClusterSecrets(current: current, previous: previous), channel: channel)
    }

    @Test func everyMessageSignedWithTheSecretOpensAsItWasSent() throws {
        let signer = try Self.signer()
        for message in ClusterMessageTests.messages {
            let envelope = ClusterEnvelope(sender: "node-a.1", message: message)
            let payload = signer.seal(envelope, stamp: Self.stamp)
            #expect(payload.hasPrefix("s1|"))
            #expect(payload.utf8.count < 400, "far below NOTIFY's 8,000 bytes")
            let opened = try signer.open(payload, now: Self.now).get()
            #expect(opened.envelope == envelope)
            #expect(opened.stamp == Self.stamp)
            #expect(!opened.signedWithPrevious)
        }
    }

    @Test func aMessageSignedWithAnotherSecretIsABadSignature() throws {
        let payload = try Self.signer(Self.other).seal(Self.revoke, stamp: Self.stamp)
        #expect(try Self.signer().open(payload, now: Self.now) == .failure(.badSignature))
        // Nor does the channel's name move: a message signed for one channel is not good on another.
        let elsewhere = try Self.signer(channel: "another_channel").seal(Self.revoke, stamp: Self.stamp)
        #expect(try Self.signer().open(elsewhere, now: Self.now) == .failure(.badSignature))
    }

    @Test func changingAnyFieldOfASignedMessageBreaksItsSignature() throws {
        let signer = try Self.signer()
        let payload = signer.seal(Self.revoke, stamp: Self.stamp)
        var fields = payload.split(separator: "|", omittingEmptySubsequences: false).map(String.init)
        #expect(fields.count == 9)  // s1, MAC, sender, time, boot, sequence, revoked, player, device
        for index in 2..<fields.count {
            let original = fields[index]
            // Another sender, a later time (a replay made fresh), another boot or sequence,
            // another kind, another player or device: each is refused.
            fields[index] = index == 6 ? "settings" : original + "1"
            #expect(signer.open(fields.joined(separator: "|"), now: Self.now) == .failure(.badSignature), "field \(index)")
            fields[index] = original
        }
        var flipped = Array(fields[1])
        flipped[0] = flipped[0] == "0" ? "1" : "0"
        fields[1] = String(flipped)
        #expect(signer.open(fields.joined(separator: "|"), now: Self.now) == .failure(.badSignature))
    }

    @Test func aMessageOutsideTheWindowIsStaleEitherWay() throws {
        let signer = try Self.signer()
        let payload = signer.seal(Self.revoke, stamp: Self.stamp)
        let window = ClusterSigner.window
        #expect((try? signer.open(payload, now: Self.now + window).get()) != nil)
        #expect((try? signer.open(payload, now: Self.now - window).get()) != nil)
        #expect(signer.open(payload, now: Self.now + window + 1) == .failure(.stale))
        #expect(signer.open(payload, now: Self.now - window - 1) == .failure(.stale))
        #expect(signer.open(payload, now: Int64.min) == .failure(.stale))
        #expect(signer.open(payload, now: Int64.max) == .failure(.stale))
    }

    @Test func thePreviousSecretIsAcceptedDuringARotationAndNeverSigns() throws {
        // Mid-rotation: some nodes sign with the new secret and keep the old as previous...
        let rotated = try Self.signer(Self.other, previous: Self.secret)
        // ...the others still sign with the old one and already accept the new one.
        let notYet = try Self.signer(Self.secret, previous: Self.other)
        let fromNotYet = notYet.seal(Self.revoke, stamp: Self.stamp)
        let fromRotated = rotated.seal(Self.revoke, stamp: Self.stamp)
        #expect(try rotated.open(fromNotYet, now: Self.now).get().signedWithPrevious)
        #expect(try notYet.open(fromRotated, now: Self.now).get().signedWithPrevious)
        #expect(try !rotated.open(fromRotated, now: Self.now).get().signedWithPrevious)
        // Signing uses the current secret only: a node that has dropped the old one rejects it.
        #expect(try Self.signer(Self.other).open(fromNotYet, now: Self.now) == .failure(.badSignature))
        #expect((try? Self.signer(Self.other).open(fromRotated, now: Self.now).get()) != nil)
    }

    @Test func anUnsignedOrGarbledPayloadIsRefusedWithoutTrapping() throws {
        let signer = try Self.signer()
        let code = String(repeating: "a", count: 64)
        for payload in ["", "a|revoked|7|9", "node-a|release|g-1|7|node-b", "a|settings|7|9|99", "s1", "s1|", "s1|\(code)",
                        "s1|\(code)x|a|1|2|3|revoked|7|9", "s1|\(String(repeating: "g", count: 64))|a|1|2|3|revoked|7|9",
                        "S1|\(code)|a|1|2|3|revoked|7|9", String(repeating: "s1|", count: 3000)] {
            #expect(signer.open(payload, now: Self.now) == .failure(.unsigned), "\(payload.prefix(80))")
        }
        // A right form with a wrong code: bad_signature, whatever its numbers say.
        #expect(signer.open("s1|\(code)|a|99999999999999999999999|zz|-1|revoked|7|9", now: Self.now) == .failure(.badSignature))
    }

    /// A holder of the secret with a bug: numbers out of range are refused, never trapped on.
    @Test func aSignedStampWhoseNumbersAreOutOfRangeIsMalformed() throws {
        let signer = try Self.signer()
        let payload = signer.seal(Self.revoke, stamp: Self.stamp)
        #expect(try signer.open(payload, now: Self.now).get().stamp == Self.stamp)
        for bad in [ClusterStamp(boot: 1, sequence: 0, sentAt: Self.now),
                    ClusterStamp(boot: 1, sequence: 1, sentAt: -1),
                    ClusterStamp(boot: 1, sequence: 1, sentAt: Int64.max),
                    ClusterStamp(boot: 1, sequence: 1, sentAt: ClusterStamp.latestTime + 1)] {
            #expect(signer.open(signer.seal(Self.revoke, stamp: bad), now: Self.now) == .failure(.malformed), "\(bad)")
        }
        let farFuture = ClusterStamp(boot: UInt64.max, sequence: UInt64.max, sentAt: ClusterStamp.latestTime)
        #expect(signer.open(signer.seal(Self.revoke, stamp: farFuture), now: Self.now) == .failure(.stale))
        #expect(try signer.open(signer.seal(Self.revoke, stamp: farFuture), now: ClusterStamp.latestTime).get().stamp == farFuture)
    }

    @Test func aSignedMessageWithAnImpossibleIDOpensButReachesNoHandler() throws {
        let signer = try Self.signer()
        #expect(try signer.open(signer.seal(Self.revoke, stamp: Self.stamp), now: Self.now).get().body == "revoked|7|9")
        // Ids from 1, versions from 0: anything else is no message, even signed.
        for message in [ClusterMessage.deviceRevoked(playerID: 0, deviceID: 9), .deviceRevoked(playerID: 7, deviceID: -9),
                        .settingsChanged(playerID: 7, deviceID: 9, version: -1), .releaseGame(gameID: "g", playerID: -1, owner: "b")] {
            let opened = try signer.open(signer.seal(ClusterEnvelope(sender: "node-a", message: message), stamp: Self.stamp),
                                         now: Self.now).get()
            #expect(opened.envelope == nil, "\(message)")
        }
        #expect(ClusterEnvelope(encoded: "node-a|revoked|9223372036854775808|9") == nil, "past Int64: refused, not trapped")
    }

    @Test func tooShortASecretOrThePreviousEqualToTheCurrentIsRefused() {
        #expect(throws: ClusterSecretsError.tooShort(setting: "cluster-secret", length: 31)) {
            _ = try ClusterSecrets(current: String(repeating: "x", count: 31))
        }
        #expect(throws: ClusterSecretsError.tooShort(setting: "cluster-secret-previous", length: 5)) {
            _ = try ClusterSecrets(current: Self.secret, previous: "short")
        }
        #expect(throws: ClusterSecretsError.previousIsCurrent) { _ = try ClusterSecrets(current: Self.secret, previous: Self.secret) }
        #expect(!"\(ClusterSecretsError.tooShort(setting: "cluster-secret", length: 31))".contains("xxxx"))
    }
}

@Suite("A copy of a signed bus message is refused")
struct ClusterReplayGuardTests {
    static let now = ClusterSignerTests.now

    @Test func eachSendingProcessMustCountUp() {
        var guarded = ClusterReplayGuard()
        let first = ClusterStamp(boot: 1, sequence: 1, sentAt: Self.now)
        let second = ClusterStamp(boot: 1, sequence: 2, sentAt: Self.now)
        // `admit` is mutating, so each answer is taken before `#expect` looks at it.
        let answers = [guarded.admit(sender: "a", stamp: first, now: Self.now),
                       guarded.admit(sender: "a", stamp: second, now: Self.now),
                       guarded.admit(sender: "a", stamp: second, now: Self.now),  // the same message again
                       guarded.admit(sender: "a", stamp: first, now: Self.now),   // an earlier one again
                       // Another node, or the same node restarted (a new boot), counts on its own.
                       guarded.admit(sender: "b", stamp: first, now: Self.now),
                       guarded.admit(sender: "a", stamp: ClusterStamp(boot: 2, sequence: 1, sentAt: Self.now), now: Self.now)]
        #expect(answers == [true, true, false, false, true, true])
        #expect(guarded.count == 3)
    }

    @Test func aSenderIsForgottenOnlyOnceItsMessagesAreStale() throws {
        var guarded = ClusterReplayGuard()
        let signer = try ClusterSignerTests.signer()
        let stamp = ClusterStamp(boot: 9, sequence: 5, sentAt: Self.now)
        let payload = signer.seal(ClusterSignerTests.revoke, stamp: stamp)
        let taken = guarded.admit(sender: "node-a", stamp: stamp, now: Self.now)
        // Within the window the copy is still known...
        let copyWithinWindow = guarded.admit(sender: "node-a", stamp: stamp, now: Self.now + ClusterSigner.window)
        // ...and once the guard forgets it, the signer already calls it stale.
        let muchLater = Self.now + 2 * ClusterSigner.window + 1
        let other = guarded.admit(sender: "other", stamp: ClusterStamp(boot: 1, sequence: 1, sentAt: muchLater), now: muchLater)
        #expect(taken && !copyWithinWindow && other)
        #expect(guarded.count == 1)
        #expect(signer.open(payload, now: muchLater) == .failure(.stale))
    }
}
