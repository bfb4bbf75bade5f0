package dev.fencing.agent.startup;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class BundledLibrariesTest {
  @AfterEach
  void clear() {
    System.clearProperty(BundledLibraries.NETTY_JFR);
    System.clearProperty(BundledLibraries.NETTY_NO_NATIVE);
  }

  @Test
  void turnsTheBundledNettysJfrSupportAndNativeTransportsOff() {
    BundledLibraries.configure();
    assertThat(System.getProperty(BundledLibraries.NETTY_JFR)).isEqualTo("false");
    assertThat(System.getProperty(BundledLibraries.NETTY_NO_NATIVE)).isEqualTo("true");
  }

  @Test
  void leavesAValueTheOperatorSet() {
    System.setProperty(BundledLibraries.NETTY_JFR, "true");
    BundledLibraries.configure();
    assertThat(System.getProperty(BundledLibraries.NETTY_JFR)).isEqualTo("true");
  }
}
