package dev.fencing.fence.store;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;

class FencePolicyTest {

  @Test
  void defaultsFenceTheUnsafeMethodsOnEveryPath() {
    FencePolicy p = FencePolicy.forLocks("ledger").build();
    assertThat(p.methods()).containsExactly("POST", "PUT", "PATCH", "DELETE");
    for (String m : new String[] {"POST", "PUT", "PATCH", "DELETE", "post"}) {
      assertThat(p.fences(m, "/anything")).as(m).isTrue();
    }
    for (String m : new String[] {"GET", "HEAD", "OPTIONS", "TRACE"}) {
      assertThat(p.fences(m, "/anything")).as(m).isFalse();
    }
    assertThat(p.strict()).isFalse();
    assertThat(p.permissive()).isFalse();
    assertThat(p.drainTimeout()).isEqualTo(FencePolicy.DEFAULT_DRAIN_TIMEOUT);
  }

  @Test
  void prefixesMatchWholeSegmentsOfTheNormalisedPath() {
    FencePolicy p = FencePolicy.forLocks("ledger").paths("/api", "/admin/").build();
    assertThat(p.fences("POST", "/api")).isTrue();
    assertThat(p.fences("POST", "/api/orders/1")).isTrue();
    assertThat(p.fences("POST", "/admin")).isTrue();
    assertThat(p.fences("POST", "/apix")).isFalse();
    assertThat(p.fences("POST", "/public/api")).isFalse();
    assertThat(p.fences("POST", "//api//orders")).isTrue();
    assertThat(p.fences("POST", "/public/../api/orders")).isTrue();
    assertThat(p.fences("POST", "/./api")).isTrue();
    assertThat(p.fences("POST", "/../../etc")).isTrue();
    assertThat(p.fences("POST", "")).isFalse();
  }

  @Test
  void settingsAreReadAndCheckedWithTheKeyInTheMessage() {
    FencePolicy p = FencePolicy.fromSettings(Map.of("locks", "ledger, billing", "paths", "/api,/jobs",
        "methods", "post,PUT", "strict", "true", "permissive", "TRUE", "drainTimeoutMillis", "250")::get);
    assertThat(p.locks()).containsExactly("ledger", "billing");
    assertThat(p.paths()).containsExactly("/api", "/jobs");
    assertThat(p.methods()).containsExactly("POST", "PUT");
    assertThat(p.strict()).isTrue();
    assertThat(p.permissive()).isTrue();
    assertThat(p.drainTimeout()).isEqualTo(Duration.ofMillis(250));

    assertThatThrownBy(() -> FencePolicy.fromSettings(Map.<String, String>of()::get))
        .hasMessageContaining("missing setting 'locks'");
    assertThatThrownBy(() -> FencePolicy.fromSettings(Map.of("locks", "a b")::get))
        .hasMessageContaining("invalid lock name 'a b'");
    assertThatThrownBy(() -> FencePolicy.fromSettings(Map.of("locks", "a", "strict", "yes")::get))
        .hasMessageContaining("invalid setting strict='yes': expected true or false");
    assertThatThrownBy(() -> FencePolicy.fromSettings(Map.of("locks", "a", "drainTimeoutMillis", "0")::get))
        .hasMessageContaining("drainTimeoutMillis='0'");
    assertThatThrownBy(() -> FencePolicy.fromSettings(Map.of("locks", "a", "paths", "api")::get))
        .hasMessageContaining("invalid path prefix 'api'");
    assertThatThrownBy(() -> FencePolicy.fromSettings(Map.of("locks", "a", "methods", "PO ST")::get))
        .hasMessageContaining("invalid method 'PO ST'");
  }
}
