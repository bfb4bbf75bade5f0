package dev.fencing.agent.policy;

import dev.fencing.agent.instrumentation.api.SideEffectCounters;
import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.agent.bootstrap.AgentThread;
import dev.fencing.agent.bootstrap.BlockReason;
import dev.fencing.agent.bootstrap.Channel;
import dev.fencing.agent.bootstrap.Decision;
import dev.fencing.agent.instrumentation.api.SideEffectCounters.Outcome;
import dev.fencing.agent.token.Grant;
import dev.fencing.agent.token.HighestTokenStore;
import dev.fencing.agent.token.LossReason;
import dev.fencing.agent.token.TokenState;
import dev.fencing.agent.token.TokenStateFixtures;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.ValueSource;

class SideEffectPolicyTest {
  private static final String LOCK = "ledger";
  private static final long TOKEN = 42;
  private static final long TOKEN_MAX = 1000;
  private static final long OVERFLOW_TOKEN = TOKEN_MAX + 1;
  private static final long SECOND = TimeUnit.SECONDS.toNanos(1);
  private static final long CLUSTER = 0xC1;

  private final AtomicLong clock = new AtomicLong(1_000 * SECOND);
  private final TokenState state = TokenStateFixtures.onClock(LOCK, TOKEN_MAX, clock::get);
  private final SideEffectCounters counters = new SideEffectCounters();

  /** The token states of the decision table, arranged on {@link #state}. */
  enum Scenario {
    STARTING(0), STANDBY(0), HOLDING(TOKEN), EXPIRED(TOKEN), LOST(TOKEN), FAILED(0),
    REUSED_HOLDING(TOKEN), REUSED_EXPIRED(TOKEN), OVERFLOW_HOLDING(OVERFLOW_TOKEN), OVERFLOW_EXPIRED(OVERFLOW_TOKEN);

    /** The last token held in this scenario, 0 if none. */
    final long token;

    Scenario(long token) {
      this.token = token;
    }
  }

  // ---- helpers ----

  private void arrange(Scenario scenario) {
    switch (scenario) {
      case STARTING:
        break;
      case STANDBY:
        state.standby("campaigning");
        break;
      case HOLDING:
        grant(TOKEN);
        break;
      case EXPIRED:
        expire(grant(TOKEN));
        break;
      case LOST:
        state.lost(grant(TOKEN), LossReason.KEY_DELETED);
        break;
      case FAILED:
        state.failed("misconfigured");
        break;
      case REUSED_HOLDING:
        grant(TOKEN);
        grant(TOKEN);
        break;
      case REUSED_EXPIRED:
        grant(TOKEN);
        expire(grant(TOKEN));
        break;
      case OVERFLOW_HOLDING:
        grant(OVERFLOW_TOKEN);
        break;
      case OVERFLOW_EXPIRED:
        expire(grant(OVERFLOW_TOKEN));
        break;
      default:
        throw new AssertionError(scenario);
    }
  }

  private Grant grant(long token) {
    return state.granted(token, 7, CLUSTER, clock.get() + 10 * SECOND);
  }

  /** Moves the fake clock to the grant's deadline: expired at read time, with no writer call. */
  private void expire(Grant g) {
    clock.set(g.deadlineNanos());
  }

  private SideEffectPolicy enforce(boolean expiredTag) {
    return new SideEffectPolicy(state, counters, false, false, expiredTag, false, 0);
  }

  private SideEffectPolicy enforce() {
    return enforce(true);
  }

  private SideEffectPolicy failOpen() {
    return new SideEffectPolicy(state, counters, false, true, true, false, 0);
  }

  private SideEffectPolicy observe(boolean expiredTag) {
    return new SideEffectPolicy(state, counters, true, false, expiredTag, false, 0);
  }

  private static SideEffectPolicy waiting(TokenState on, SideEffectCounters counters, long timeoutMillis) {
    return new SideEffectPolicy(on, counters, false, false, true, true, TimeUnit.MILLISECONDS.toNanos(timeoutMillis));
  }

  private static Decision write(SideEffectPolicy policy, boolean fenced) {
    return policy.decide(Channel.JDBC, true, fenced);
  }

  private static Decision read(SideEffectPolicy policy, boolean fenced) {
    return policy.decide(Channel.JDBC, false, fenced);
  }

  private static void assertTag(Decision d, long token) {
    assertThat(d.kind()).isEqualTo(Decision.Kind.TAG);
    assertThat(d.lock()).isEqualTo(LOCK);
    assertThat(d.token()).isEqualTo(token);
    assertThat(d.tokenText()).isEqualTo(Long.toString(token));
    assertThat(d.reason()).isNull();
    assertThat(d.observed()).isFalse();
  }

  private static void assertBlock(Decision d, BlockReason reason, long lastToken) {
    assertThat(d.kind()).isEqualTo(Decision.Kind.BLOCK);
    assertThat(d.lock()).isEqualTo(LOCK);
    assertThat(d.reason()).isEqualTo(reason);
    assertThat(d.token()).isEqualTo(lastToken);
    assertThat(d.observed()).isFalse();
  }

  private static void assertPass(Decision d) {
    assertThat(d.kind()).isEqualTo(Decision.Kind.PASS);
    assertThat(d.lock()).isEqualTo(LOCK);
    assertThat(d.reason()).isNull();
    assertThat(d.observed()).isFalse();
  }

  private static long total(SideEffectCounters c) {
    long sum = 0;
    for (Channel channel : Channel.values()) {
      for (Outcome outcome : Outcome.values()) {
        sum += c.count(channel, true, outcome) + c.count(channel, false, outcome);
      }
    }
    return sum;
  }

  // ---- writes: holding ----

  @ParameterizedTest(name = "fenced={0}")
  @ValueSource(booleans = {true, false})
  void holdingTagsWritesWithLockAndToken(boolean fenced) {
    arrange(Scenario.HOLDING);

    assertTag(write(enforce(), fenced), TOKEN);
  }

  @ParameterizedTest(name = "fenced={0}")
  @ValueSource(booleans = {true, false})
  void holdingReturnsTheSameDecisionInstanceOnEveryCall(boolean fenced) {
    arrange(Scenario.HOLDING);
    SideEffectPolicy policy = enforce();

    Decision first = write(policy, fenced);

    assertThat(write(policy, fenced)).isSameAs(first);
    assertThat(read(policy, fenced)).isSameAs(first);
  }

  @Test
  void blockDecisionsAreAlsoReused() {
    arrange(Scenario.STANDBY);
    SideEffectPolicy policy = enforce();

    assertThat(write(policy, false)).isSameAs(write(policy, false));
  }

  @Test
  void aNewGrantTagsWithTheNewToken() {
    SideEffectPolicy policy = enforce();
    state.lost(grant(TOKEN), LossReason.LEASE_REVOKED);
    write(policy, true);

    grant(TOKEN + 1);

    assertTag(write(policy, true), TOKEN + 1);
  }

  // ---- writes: expired or lost ----

  @ParameterizedTest
  @EnumSource(value = Scenario.class, names = {"EXPIRED", "LOST"})
  void expiredOrLostTagsFencedWritesWithTheLastTokenWhenExpiredTagIsOn(Scenario scenario) {
    arrange(scenario);

    assertTag(write(enforce(true), true), TOKEN);
  }

  @ParameterizedTest
  @EnumSource(value = Scenario.class, names = {"EXPIRED", "LOST"})
  void expiredOrLostBlocksFencedWritesWhenExpiredTagIsOff(Scenario scenario) {
    arrange(scenario);

    assertBlock(write(enforce(false), true), BlockReason.valueOf(scenario.name()), TOKEN);
  }

  @ParameterizedTest(name = "expiredTag={0}")
  @ValueSource(booleans = {true, false})
  void expiredBlocksUnfencedWrites(boolean expiredTag) {
    arrange(Scenario.EXPIRED);

    assertBlock(write(enforce(expiredTag), false), BlockReason.EXPIRED, TOKEN);
  }

  @ParameterizedTest(name = "expiredTag={0}")
  @ValueSource(booleans = {true, false})
  void lostBlocksUnfencedWrites(boolean expiredTag) {
    arrange(Scenario.LOST);

    assertBlock(write(enforce(expiredTag), false), BlockReason.LOST, TOKEN);
  }

  @Test
  void keepaliveFailureCountsAsExpired() {
    state.lost(grant(TOKEN), LossReason.KEEPALIVE_FAILED);

    assertBlock(write(enforce(), false), BlockReason.EXPIRED, TOKEN);
  }

  @Test
  void oneNanosecondBeforeTheDeadlineStillTags() {
    Grant g = grant(TOKEN);
    clock.set(g.deadlineNanos() - 1);
    SideEffectPolicy policy = enforce();
    assertTag(write(policy, false), TOKEN);

    clock.set(g.deadlineNanos());

    assertBlock(write(policy, false), BlockReason.EXPIRED, TOKEN);
  }

  // ---- writes: never held ----

  @ParameterizedTest
  @EnumSource(value = Scenario.class, names = {"STARTING", "STANDBY"})
  void neverHeldBlocksFencedAndUnfencedWrites(Scenario scenario) {
    arrange(scenario);
    SideEffectPolicy policy = enforce();

    assertBlock(write(policy, true), BlockReason.STANDBY, 0);
    assertBlock(write(policy, false), BlockReason.STANDBY, 0);
  }

  // ---- writes: reuse and overflow ----

  @ParameterizedTest
  @EnumSource(value = Scenario.class, names = {"REUSED_HOLDING", "REUSED_EXPIRED"})
  void reusedTokenBlocksFencedAndUnfencedWrites(Scenario scenario) {
    arrange(scenario);
    SideEffectPolicy policy = enforce(true);

    assertBlock(write(policy, true), BlockReason.TOKEN_REUSED, TOKEN);
    assertBlock(write(policy, false), BlockReason.TOKEN_REUSED, TOKEN);
  }

  @ParameterizedTest
  @EnumSource(value = Scenario.class, names = {"OVERFLOW_HOLDING", "OVERFLOW_EXPIRED"})
  void overflowedTokenBlocksFencedAndUnfencedWrites(Scenario scenario) {
    arrange(scenario);
    SideEffectPolicy policy = enforce(true);

    assertBlock(write(policy, true), BlockReason.TOKEN_OVERFLOW, OVERFLOW_TOKEN);
    assertBlock(write(policy, false), BlockReason.TOKEN_OVERFLOW, OVERFLOW_TOKEN);
  }

  @Test
  void reusedTokenBlocksAlsoAfterALoss() {
    grant(TOKEN);
    state.lost(grant(TOKEN), LossReason.KEY_DELETED);

    assertBlock(write(enforce(true), true), BlockReason.TOKEN_REUSED, TOKEN);
  }

  // ---- writes: agent failed ----

  @ParameterizedTest(name = "fenced={0}")
  @ValueSource(booleans = {true, false})
  void failedBlocksWritesWhenFailModeIsClosed(boolean fenced) {
    arrange(Scenario.FAILED);

    assertBlock(write(enforce(), fenced), BlockReason.AGENT_FAILED, 0);
  }

  @ParameterizedTest(name = "fenced={0}")
  @ValueSource(booleans = {true, false})
  void failedPassesWritesWhenFailModeIsOpen(boolean fenced) {
    arrange(Scenario.FAILED);

    assertPass(write(failOpen(), fenced));
  }

  // ---- reads ----

  @ParameterizedTest
  @EnumSource(Scenario.class)
  void readsAreNeverBlockedAndCarryTheTokenOnlyWhileValid(Scenario scenario) {
    arrange(scenario);

    for (SideEffectPolicy policy : new SideEffectPolicy[] {enforce(true), enforce(false), failOpen()}) {
      for (boolean fenced : new boolean[] {true, false}) {
        Decision d = read(policy, fenced);
        if (scenario == Scenario.HOLDING) {
          assertTag(d, TOKEN);
        } else {
          assertPass(d);
        }
      }
    }
  }

  // ---- observe mode ----

  @ParameterizedTest
  @EnumSource(Scenario.class)
  void observeModeNeverBlocksAndKeepsTheReason(Scenario scenario) {
    arrange(scenario);

    for (boolean fenced : new boolean[] {true, false}) {
      Decision enforced = write(enforce(false), fenced);
      Decision observed = write(observe(false), fenced);
      if (enforced.isBlock()) {
        assertThat(observed.isBlock()).isFalse();
        assertThat(observed.observed()).isTrue();
        assertThat(observed.reason()).isEqualTo(enforced.reason());
        assertThat(observed.token()).isEqualTo(scenario.token);
        assertThat(observed.kind()).isEqualTo(scenario.token > 0 ? Decision.Kind.TAG : Decision.Kind.PASS);
      } else {
        assertThat(observed.kind()).isEqualTo(enforced.kind());
        assertThat(observed.observed()).isFalse();
      }
    }
  }

  @Test
  void observeModeTagsExpiredWritesWithTheLastToken() {
    arrange(Scenario.EXPIRED);

    Decision d = write(observe(false), false);

    assertThat(d.kind()).isEqualTo(Decision.Kind.TAG);
    assertThat(d.tokenText()).isEqualTo("42");
    assertThat(d.reason()).isEqualTo(BlockReason.EXPIRED);
    assertThat(d.observed()).isTrue();
  }

  // ---- standby=wait (real clock, short timeouts) ----

  @Test
  void waitingWriteIsTaggedWhenAGrantArrivesInTime() throws Exception {
    TokenState real = new TokenState(LOCK, TOKEN_MAX, HighestTokenStore.none());
    SideEffectPolicy policy = waiting(real, counters, 5_000);
    Thread granter = grantLater(real, 100);

    Decision d = write(policy, false);

    granter.join();
    assertTag(d, TOKEN);
    assertThat(counters.count(Channel.JDBC, false, Outcome.TAGGED)).isEqualTo(1);
    assertThat(total(counters)).isEqualTo(1);
  }

  @Test
  void waitingWriteAfterExpiryIsTaggedWithTheNewToken() throws Exception {
    TokenState real = new TokenState(LOCK, TOKEN_MAX, HighestTokenStore.none());
    real.granted(TOKEN - 1, 7, CLUSTER, System.nanoTime());
    SideEffectPolicy policy = waiting(real, counters, 5_000);
    Thread granter = grantLater(real, 100);

    Decision d = write(policy, false);

    granter.join();
    assertTag(d, TOKEN);
  }

  @Test
  void waitingWriteIsBlockedAfterTheTimeout() {
    TokenState real = new TokenState(LOCK, TOKEN_MAX, HighestTokenStore.none());
    SideEffectPolicy policy = waiting(real, counters, 200);
    long start = System.nanoTime();

    Decision d = write(policy, false);

    assertThat(System.nanoTime() - start).isGreaterThanOrEqualTo(TimeUnit.MILLISECONDS.toNanos(200));
    assertBlock(d, BlockReason.STANDBY, 0);
    assertThat(counters.count(Channel.JDBC, false, Outcome.BLOCKED)).isEqualTo(1);
    assertThat(total(counters)).isEqualTo(1);
  }

  @Test
  void noWaitForABlockThatANewLeaseCannotLift() {
    TokenState real = new TokenState(LOCK, TOKEN_MAX, HighestTokenStore.none());
    real.failed("misconfigured");
    SideEffectPolicy policy = waiting(real, counters, 5_000);
    long start = System.nanoTime();

    Decision d = write(policy, false);

    assertBlock(d, BlockReason.AGENT_FAILED, 0);
    assertThat(System.nanoTime() - start).isLessThan(TimeUnit.SECONDS.toNanos(1));
  }

  /** A thread as Reactor Netty's event loops are: a Thread subclass marked reactor.core.scheduler.NonBlocking. */
  static final class EventLoopThread extends Thread implements reactor.core.scheduler.NonBlocking {
    EventLoopThread(Runnable task) {
      super(task, "reactor-http-nio-1");
    }
  }

  @Test
  void noWaitOnAThreadThatMustNotBlock() throws Exception {
    TokenState real = new TokenState(LOCK, TOKEN_MAX, HighestTokenStore.none());
    SideEffectPolicy policy = waiting(real, counters, 5_000);
    Decision[] d = new Decision[1];
    long[] took = new long[1];
    Thread loop = new EventLoopThread(() -> {
      long start = System.nanoTime();
      d[0] = write(policy, false);
      took[0] = System.nanoTime() - start;
    });

    loop.start();
    loop.join();

    assertBlock(d[0], BlockReason.STANDBY, 0);
    assertThat(took[0]).as("an event loop is never held for the lease").isLessThan(TimeUnit.SECONDS.toNanos(1));
    assertThat(counters.count(Channel.JDBC, false, Outcome.BLOCKED)).isEqualTo(1);
  }

  private static Thread grantLater(TokenState on, long millis) {
    Thread t = new Thread(() -> {
      try {
        Thread.sleep(millis);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return;
      }
      on.granted(TOKEN, 7, CLUSTER, System.nanoTime() + 10 * SECOND);
    });
    t.start();
    return t;
  }

  // ---- current(): what span attributes read ----

  @Test
  void currentIsTheFencedWriteDecisionWithoutCountingOrWaiting() {
    SideEffectPolicy policy = waiting(state, counters, 5_000);
    assertBlock(policy.current(), BlockReason.STANDBY, 0); // standby: no wait, no token

    grant(TOKEN);
    assertTag(policy.current(), TOKEN);
    assertThat(total(counters)).isZero();
  }

  @Test
  void currentCarriesAnInboundTokenOnlyWithoutALeaseOfItsOwn() {
    grant(TOKEN);
    SideEffectPolicy noLease = new SideEffectPolicy(state, counters, false, false, true, false, 0, true);
    Object scope = dev.fencing.agent.bootstrap.TokenContext.enter("upstream", "7");
    try {
      Decision d = noLease.current();
      assertThat(d.lock()).isEqualTo("upstream");
      assertThat(d.token()).isEqualTo(7);
      assertTag(enforce().current(), TOKEN); // a JVM with its own lease carries its own token
    } finally {
      dev.fencing.agent.bootstrap.TokenContext.exit(scope);
    }
  }

  // ---- counters ----

  @Test
  void countsTaggedWritesByChannelAndFencedness() {
    arrange(Scenario.HOLDING);
    SideEffectPolicy policy = enforce();

    policy.decide(Channel.HTTP, true, true);
    policy.decide(Channel.HTTP, true, true);
    policy.decide(Channel.KAFKA, true, false);

    assertThat(counters.count(Channel.HTTP, true, Outcome.TAGGED)).isEqualTo(2);
    assertThat(counters.count(Channel.KAFKA, false, Outcome.TAGGED)).isEqualTo(1);
    assertThat(total(counters)).isEqualTo(3);
  }

  @Test
  void countsBlockedWrites() {
    arrange(Scenario.STANDBY);

    enforce().decide(Channel.JDBC, true, false);

    assertThat(counters.count(Channel.JDBC, false, Outcome.BLOCKED)).isEqualTo(1);
    assertThat(total(counters)).isEqualTo(1);
  }

  @Test
  void countsPassedWrites() {
    arrange(Scenario.FAILED);

    failOpen().decide(Channel.KAFKA, true, true);

    assertThat(counters.count(Channel.KAFKA, true, Outcome.PASSED)).isEqualTo(1);
    assertThat(total(counters)).isEqualTo(1);
  }

  @Test
  void countsWritesThatObserveModeWouldHaveBlocked() {
    arrange(Scenario.STANDBY);

    observe(true).decide(Channel.HTTP, true, false);

    assertThat(counters.count(Channel.HTTP, false, Outcome.WOULD_BLOCK)).isEqualTo(1);
    assertThat(total(counters)).isEqualTo(1);
  }

  @ParameterizedTest
  @EnumSource(value = Scenario.class, names = {"HOLDING", "STANDBY", "EXPIRED", "FAILED"})
  void doesNotCountReads(Scenario scenario) {
    arrange(scenario);
    SideEffectPolicy policy = enforce();

    for (Channel channel : Channel.values()) {
      policy.decide(channel, false, true);
      policy.decide(channel, false, false);
    }

    assertThat(total(counters)).isZero();
  }

  // ---- the agent's own threads ----

  @ParameterizedTest
  @EnumSource(value = Scenario.class, names = {"HOLDING", "STANDBY", "FAILED"})
  void agentThreadsPassUncounted(Scenario scenario) throws Exception {
    arrange(scenario);
    SideEffectPolicy policy = enforce();
    AtomicReference<Decision> decision = new AtomicReference<>();

    Thread agentThread = new AgentThread(() -> decision.set(write(policy, false)), "fencing-test", null);
    agentThread.start();
    agentThread.join();

    assertPass(decision.get());
    assertThat(total(counters)).isZero();
  }

  // ---- the block message ----

  @Test
  void blockMessageNamesLockTokenAndReason() {
    arrange(Scenario.EXPIRED);

    String message = write(enforce(), false).blockMessage(Channel.JDBC);

    assertThat(message).contains("jdbc", "'" + LOCK + "'", "token 42", BlockReason.EXPIRED.description());
  }

  @Test
  void blockMessageWithoutTokenSaysNone() {
    arrange(Scenario.STANDBY);

    String message = write(enforce(), false).blockMessage(Channel.HTTP);

    assertThat(message).contains("http", "'" + LOCK + "'", "token none", BlockReason.STANDBY.description());
  }

  // ---- cross-hop propagation ----

  /**
   * A JVM that campaigns for a lock decides by its own lease: an inbound Fencing-Token (which anyone can send) must
   * not turn a standby, expired or failed JVM into a writer, nor replace a holder's token.
   */
  @ParameterizedTest
  @EnumSource(Scenario.class)
  void anInboundTokenNeverOverridesThisJvmsOwnLease(Scenario scenario) {
    arrange(scenario);
    Decision own = write(enforce(), true);
    Object scope = dev.fencing.agent.bootstrap.TokenContext.enter(LOCK, "999999");
    try {
      Decision d = write(enforce(), true);
      assertThat(d.kind()).isEqualTo(own.kind());
      assertThat(d.lock()).isEqualTo(LOCK);
      assertThat(d.token()).isEqualTo(own.token());
      assertThat(d.reason()).isEqualTo(own.reason());
    } finally {
      dev.fencing.agent.bootstrap.TokenContext.exit(scope);
    }
  }

  @Test
  void withoutALeaseAnInboundTokenIsCarriedOnward() {
    SideEffectPolicy noLease = new SideEffectPolicy(state, counters, false, false, true, false, 0, true);
    Object scope = dev.fencing.agent.bootstrap.TokenContext.enter("orders", "7");
    try {
      Decision d = write(noLease, true);
      assertThat(d.isTag()).isTrue();
      assertThat(d.lock()).isEqualTo("orders");
      assertThat(d.token()).isEqualTo(7);
      assertThat(counters.count(Channel.JDBC, true, Outcome.TAGGED)).isEqualTo(1);
    } finally {
      dev.fencing.agent.bootstrap.TokenContext.exit(scope);
    }
    assertPass(write(noLease, true));
  }

  @Test
  void withoutALeaseEverythingPassesUntaggedOutsideAnInboundRequest() {
    SideEffectPolicy noLease = new SideEffectPolicy(state, counters, false, false, true, false, 0, true);

    assertPass(write(noLease, true));
    assertPass(read(noLease, false));
    Object scope = dev.fencing.agent.bootstrap.TokenContext.enter("orders", "7");
    try {
      assertThat(read(noLease, false).tokenText()).isEqualTo("7");
    } finally {
      dev.fencing.agent.bootstrap.TokenContext.exit(scope);
    }
  }

  // ---- a hook that failed ----

  @Test
  void aFailedHookBlocksWritesWithFailModeClosedAndLetsThemThroughWithOpen() {
    arrange(Scenario.HOLDING);
    RuntimeException bug = new IllegalStateException("driver bug");
    assertBlock(enforce().hookFailed(Channel.JDBC, true, bug), BlockReason.HOOK_FAILED, TOKEN);
    assertPass(enforce().hookFailed(Channel.JDBC, false, bug)); // reads are never blocked
    assertPass(failOpen().hookFailed(Channel.HTTP, true, new NoClassDefFoundError("x")));
    assertThat(counters.hookFailures(Channel.JDBC)).isEqualTo(2);
    assertThat(counters.hookFailures(Channel.HTTP)).isEqualTo(1);
    assertThat(counters.count(Channel.JDBC, false, Outcome.BLOCKED)).isEqualTo(1);
    assertThat(counters.count(Channel.HTTP, false, Outcome.PASSED)).isEqualTo(1);
  }

  // ---- recheck: records buffered in a client, judged again before they leave ----

  @Test
  void bufferedRecordsMayLeaveWhileTheirGrantIsHeld() {
    SideEffectPolicy p = enforce();
    grant(TOKEN);
    Decision tagged = p.decide(Channel.KAFKA, true, false);
    assertThat(p.recheck(Channel.KAFKA, false, tagged, 5)).isNull();
    assertThat(counters.count(Channel.KAFKA, false, Outcome.BLOCKED)).isZero();
  }

  @Test
  void bufferedRecordsToAnUnfencedDestinationAreBlockedAndCountedOncePerRecordAfterTheDeadline() {
    SideEffectPolicy p = enforce(true); // expired-fenced=tag: changes nothing for an unfenced destination
    Grant g = grant(TOKEN);
    Decision tagged = p.decide(Channel.KAFKA, true, false);
    expire(g);
    assertThat(p.recheck(Channel.KAFKA, false, tagged, 0)).as("asking only").isNotNull();
    assertThat(counters.count(Channel.KAFKA, false, Outcome.BLOCKED)).isZero();
    Decision d = p.recheck(Channel.KAFKA, false, tagged, 5);
    assertBlock(d, BlockReason.EXPIRED, TOKEN);
    assertThat(counters.count(Channel.KAFKA, false, Outcome.BLOCKED)).isEqualTo(5);
  }

  @Test
  void bufferedRecordsOfAnEarlierGrantAreBlockedUnderTheNextOne() {
    SideEffectPolicy p = enforce();
    Grant first = grant(TOKEN);
    Decision tagged = p.decide(Channel.KAFKA, true, false);
    state.lost(first, LossReason.KEY_DELETED);
    state.granted(TOKEN + 1, 8, CLUSTER, clock.get() + 10 * SECOND);
    assertTag(p.decide(Channel.KAFKA, true, false), TOKEN + 1);
    Decision d = p.recheck(Channel.KAFKA, false, tagged, 3);
    assertBlock(d, BlockReason.LOST, TOKEN);
    assertThat(d.blockMessage(Channel.KAFKA)).contains("token " + TOKEN + ": the lease was lost");
    assertThat(counters.count(Channel.KAFKA, false, Outcome.BLOCKED)).isEqualTo(3);
    // Records tagged under the new grant may leave.
    assertThat(p.recheck(Channel.KAFKA, false, p.decide(Channel.KAFKA, true, false), 1)).isNull();
  }

  @Test
  void observeModeLetsBufferedRecordsGo() {
    Grant g = grant(TOKEN);
    SideEffectPolicy observing = observe(false);
    Decision tagged = observing.decide(Channel.KAFKA, true, false);
    expire(g);
    assertThat(observing.recheck(Channel.KAFKA, false, tagged, 2)).isNull();
    assertThat(counters.count(Channel.KAFKA, false, Outcome.BLOCKED)).isZero();
  }

  @Test
  void failOpenLetsBufferedRecordsGoWhenTheAgentFailed() {
    arrange(Scenario.FAILED);
    assertThat(failOpen().recheck(Channel.KAFKA, false, null, 2)).isNull();
    assertThat(enforce().recheck(Channel.KAFKA, false, null, 2).reason()).isEqualTo(BlockReason.AGENT_FAILED);
  }

  @Test
  void withoutALeaseNothingBufferedIsHeld() {
    SideEffectPolicy none = new SideEffectPolicy(state, counters, false, false, true, false, 0, true);
    assertThat(none.recheck(Channel.KAFKA, false, null, 4)).isNull();
  }
}
