package dev.fencing.agent.bootstrap;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** What the application's API reads and declares through the bridge. */
class FencingApiTest {
  @AfterEach
  void clean() {
    Fencing.installFallback(Decision.block("(unknown)", 0, BlockReason.AGENT_FAILED));
    FencingApi.install(null);
    Sections.install(Map.of());
  }

  private static void current(Decision d) {
    Fencing.install(new SideEffectGate() {
      @Override
      public Decision decide(Channel channel, boolean write, boolean fenced) {
        return d;
      }

      @Override
      public Decision current() {
        return d;
      }
    });
  }

  @Test
  void aTagWithATokenIsCurrent() {
    Decision tag = Decision.tag("orders", 42, null, "7a3f");
    current(tag);
    assertThat(FencingApi.current()).isSameAs(tag);
    Decision observed = Decision.observedBlock("orders", 42, BlockReason.EXPIRED, null, "7a3f");
    current(observed);
    assertThat(FencingApi.current()).as("observe mode: what its writes carry").isSameAs(observed);
  }

  @Test
  void noTokenNoCoreAndAFailingGateGiveNothing() {
    assertThat(FencingApi.current()).as("the core has not started").isNull();
    current(Decision.pass("none"));
    assertThat(FencingApi.current()).isNull();
    current(Decision.block("orders", 42, BlockReason.EXPIRED));
    assertThat(FencingApi.current()).as("a write would be refused").isNull();
    current(null);
    assertThat(FencingApi.current()).as("an agent thread").isNull();
    Fencing.install(new SideEffectGate() {
      @Override
      public Decision decide(Channel channel, boolean write, boolean fenced) {
        return null;
      }

      @Override
      public Decision current() {
        throw new IllegalStateException("broken");
      }
    });
    assertThat(FencingApi.current()).isNull();
  }

  @Test
  void anAnnotatedMethodIsReportedToTheHookAndAFailingHookIsContained() {
    List<String> seen = new ArrayList<>();
    FencingApi.fenced("com.acme.Jobs.run", "orders"); // no hook: nothing
    FencingApi.install((origin, lock) -> seen.add(origin + "@" + lock));
    FencingApi.fenced("com.acme.Jobs.run", "orders");
    assertThat(seen).containsExactly("com.acme.Jobs.run@orders");
    FencingApi.install((origin, lock) -> {
      throw new IllegalStateException("broken");
    });
    FencingApi.fenced("com.acme.Jobs.run", "orders");
  }

  @Test
  void anAddedSectionEntersItsScopeAndTheConfigurationWins() {
    SectionsTest.TestScope configured = new SectionsTest.TestScope("ledger");
    SectionsTest.TestScope annotated = new SectionsTest.TestScope("orders");
    Sections.install(Map.of("com.acme.Jobs.both", configured));
    Sections.add("com.acme.Jobs.both", annotated);
    Sections.add("com.acme.Jobs.run", annotated);
    assertThat(Sections.scopeOf("com.acme.Jobs.both")).isSameAs(configured);
    assertThat(Sections.scopeOf("com.acme.Jobs.run")).isSameAs(annotated);
    annotated.holding = true;
    Object entered = Sections.enter("com.acme.Jobs.run", true);
    assertThat(TokenContext.scope()).isSameAs(annotated);
    Sections.exit(entered);
    assertThat(TokenContext.carried()).isNull();
  }
}
