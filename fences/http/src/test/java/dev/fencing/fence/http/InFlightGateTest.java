package dev.fencing.fence.http;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class InFlightGateTest {

  @Test
  void sameTokenEntersAtOnceAndAHigherTokenWaitsForItToDrain() {
    InFlightGate gate = new InFlightGate();
    InFlightGate.Epoch a = gate.enter(5);
    InFlightGate.Epoch b = gate.enter(5);
    assertThat(a).isSameAs(b);
    assertThat(a.ready).isDone();

    InFlightGate.Epoch c = gate.enter(7);
    assertThat(gate.token()).isEqualTo(7);
    assertThat(c.ready).isNotDone();
    assertThat(gate.enter(5)).isNull();
    assertThat(gate.enter(6)).isNull();

    InFlightGate.Epoch d = gate.enter(9);
    a.exit();
    assertThat(c.ready).isNotDone();
    b.exit();
    assertThat(c.ready).isDone();
    assertThat(d.ready).isNotDone();
    c.exit();
    assertThat(d.ready).isDone();
  }

  @Test
  void anEmptyEpochDrainsWhenClosed() {
    InFlightGate gate = new InFlightGate();
    InFlightGate.Epoch a = gate.enter(3);
    a.exit();
    assertThat(gate.enter(4).ready).isDone();
  }
}
