package dev.fencing.bench;

import java.util.Arrays;

/**
 * Statistics over rotating rounds, shared by the drivers that keep results as {@code [variant][round][metric]} with
 * variant 0 as the baseline (no agent): medians, and differences paired per round.
 */
final class RoundStats {
  private RoundStats() {}

  static double median(double[] x) {
    double[] s = x.clone();
    Arrays.sort(s);
    int n = s.length;
    return n % 2 == 1 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
  }

  /** The median over rounds of variant {@code v}'s metric {@code m}. */
  static double median(double[][][] r, int v, int m) {
    double[] x = new double[r[v].length];
    for (int i = 0; i < x.length; i++) {
      x[i] = r[v][i][m];
    }
    return median(x);
  }

  /** Per round, variant {@code v}'s metric {@code m} minus the baseline's (variant 0) in the same round. */
  static double[] differences(double[][][] r, int v, int m) {
    double[] x = new double[r[v].length];
    for (int i = 0; i < x.length; i++) {
      x[i] = r[v][i][m] - r[0][i][m];
    }
    return x;
  }
}
