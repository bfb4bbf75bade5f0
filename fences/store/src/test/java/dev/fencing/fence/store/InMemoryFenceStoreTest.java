package dev.fencing.fence.store;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.fence.store.Verdict.Outcome;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;
import org.junit.jupiter.api.Test;

class InMemoryFenceStoreTest {

  @Test
  void acceptsEqualAdvancesOnHigherRejectsLower() {
    InMemoryFenceStore store = new InMemoryFenceStore();
    assertThat(store.current("ledger")).isZero();
    assertThat(store.check("ledger", 5)).isEqualTo(Verdict.advanced(5));
    assertThat(store.check("ledger", 5)).isEqualTo(Verdict.accepted(5));
    assertThat(store.check("ledger", 4)).isEqualTo(Verdict.stale(4, 5));
    assertThat(store.check("ledger", 9)).isEqualTo(Verdict.advanced(9));
    assertThat(store.check("other", 1)).isEqualTo(Verdict.advanced(1));
    assertThat(store.current("ledger")).isEqualTo(9);
  }

  @Test
  void anEqualTokenFromAnotherGrantIsReplayedAndTheFenceStays() {
    InMemoryFenceStore store = new InMemoryFenceStore();
    assertThat(store.state("ledger")).isEqualTo(FenceState.NONE);
    assertThat(store.check("ledger", 5, "a1", false)).isEqualTo(Verdict.advanced(5));
    assertThat(store.state("ledger")).isEqualTo(new FenceState(5, "a1"));
    assertThat(store.check("ledger", 5, "a1", false)).isEqualTo(Verdict.accepted(5));
    assertThat(store.check("ledger", 5, "b2", false)).isEqualTo(Verdict.replayed(5));
    assertThat(store.check("ledger", 5, null, false)).as("no grant while one is stored").isEqualTo(Verdict.replayed(5));
    assertThat(store.check("ledger", 5, false)).as("the grant-less check").isEqualTo(Verdict.replayed(5));
    assertThat(Verdict.replayed(5).isAccepted()).isFalse();
    assertThat(store.check("ledger", 4, "a1", false)).isEqualTo(Verdict.stale(4, 5));
    assertThat(store.state("ledger")).isEqualTo(new FenceState(5, "a1"));
    assertThat(store.check("ledger", 6, null, false)).isEqualTo(Verdict.advanced(6));
    assertThat(store.state("ledger")).as("an advance without a grant stores none").isEqualTo(new FenceState(6, null));
    assertThat(store.check("ledger", 6, "b2", false)).isEqualTo(Verdict.accepted(6));
    assertThat(store.check("ledger", 6, "c3", false)).isEqualTo(Verdict.accepted(6));
    assertThat(store.state("ledger")).as("an equal token stores nothing").isEqualTo(new FenceState(6, null));
    assertThat(store.check("ledger", 7, "b2", true)).isEqualTo(Verdict.advanced(7));
    assertThat(store.check("ledger", 7, "b2", true)).as("strict: equal is stale first").isEqualTo(Verdict.stale(7, 7));
  }

  @Test
  void concurrentAdvancesToOneTokenFromTwoGrantsLetExactlyOneGrantIn() throws Exception {
    for (int round = 0; round < 200; round++) {
      InMemoryFenceStore store = new InMemoryFenceStore();
      store.check("ledger", 1, "old", false);
      ExecutorService pool = Executors.newFixedThreadPool(2);
      try {
        Future<Verdict> a = pool.submit(() -> store.check("ledger", 2, "a", false));
        Future<Verdict> b = pool.submit(() -> store.check("ledger", 2, "b", false));
        List<Verdict> both = List.of(a.get(), b.get());
        assertThat(both).extracting(Verdict::outcome).containsExactlyInAnyOrder(Outcome.ADVANCED, Outcome.REPLAYED);
        String winner = a.get().outcome() == Outcome.ADVANCED ? "a" : "b";
        assertThat(store.state("ledger")).isEqualTo(new FenceState(2, winner));
      } finally {
        pool.shutdownNow();
      }
    }
  }

  @Test
  void strictModeAcceptsEachTokenOnce() {
    InMemoryFenceStore store = new InMemoryFenceStore();
    assertThat(store.check("ledger", 5, true).outcome()).isEqualTo(Outcome.ADVANCED);
    assertThat(store.check("ledger", 5, true)).isEqualTo(Verdict.stale(5, 5));
    assertThat(store.check("ledger", 6, true).outcome()).isEqualTo(Outcome.ADVANCED);
  }

  @Test
  void concurrentMixedTokensEndAtTheHighestAndEachAdvanceIsUnique() throws Exception {
    InMemoryFenceStore store = new InMemoryFenceStore();
    ExecutorService pool = Executors.newFixedThreadPool(8);
    try {
      List<Future<List<Verdict>>> futures = new ArrayList<>();
      for (int t = 0; t < 8; t++) {
        futures.add(pool.submit(() -> {
          List<Verdict> out = new ArrayList<>();
          for (int i = 0; i < 20_000; i++) {
            out.add(store.check("ledger", 1 + ThreadLocalRandom.current().nextInt(1000)));
          }
          return out;
        }));
      }
      List<Verdict> all = new ArrayList<>();
      for (Future<List<Verdict>> f : futures) {
        all.addAll(f.get());
      }
      long max = all.stream().mapToLong(Verdict::token).max().orElseThrow();
      assertThat(store.current("ledger")).isEqualTo(max);
      assertThat(all.stream().filter(v -> v.outcome() == Outcome.ADVANCED).map(Verdict::token))
          .doesNotHaveDuplicates();
      assertThat(all).filteredOn(v -> v.outcome() == Outcome.STALE).allMatch(v -> v.current() > v.token());
    } finally {
      pool.shutdownNow();
    }
  }
}
