package dev.fencing.agent.instrumentation;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.agent.bootstrap.Fencing;
import dev.fencing.agent.bootstrap.FencingBlockedException;
import dev.fencing.agent.bootstrap.JdbcHook;
import org.junit.jupiter.api.Test;

class BootstrapVisibilityTest {
  /** Parent-last for the agent's bootstrap package: refuses it, as a module loader that does not delegate it. */
  static final class HidingLoader extends ClassLoader {
    HidingLoader(ClassLoader parent) {
      super("hiding", parent);
    }

    @Override
    protected Class<?> loadClass(String name, boolean resolve) throws ClassNotFoundException {
      if (name.startsWith("dev.fencing.agent.bootstrap.")) {
        throw new ClassNotFoundException(name);
      }
      return super.loadClass(name, resolve);
    }
  }

  @Test
  void aLoaderThatDelegatesSeesTheBootstrapClassesAndOneThatHidesThemDoesNotAndIsListedOnce() {
    BootstrapVisibility visibility = new BootstrapVisibility(Fencing.class);
    int before = BootstrapVisibility.unfencedLoaderCount();
    assertThat(visibility.sees(null)).isTrue();
    assertThat(visibility.sees(getClass().getClassLoader())).isTrue();

    HidingLoader hiding = new HidingLoader(getClass().getClassLoader());
    assertThat(visibility.sees(hiding)).isFalse();
    assertThat(visibility.sees(hiding)).isFalse(); // remembered: one warning, one entry
    assertThat(BootstrapVisibility.unfencedLoaderCount()).isEqualTo(before + 1);
    assertThat(BootstrapVisibility.unfencedLoaders())
        .anyMatch(n -> n.startsWith(HidingLoader.class.getName() + " 'hiding'@"));
    assertThat(BootstrapVisibility.problem(hiding, Fencing.class))
        .startsWith("cannot see the agent's bootstrap classes (dev.fencing.agent.bootstrap.Fencing: "
            + "java.lang.ClassNotFoundException");
  }

  @Test
  void aLoaderWithACopyOfItsOwnIsNamedAsSuch() throws Exception {
    ClassLoader copying = new ClassLoader("copying", null) {
      @Override
      protected Class<?> findClass(String name) throws ClassNotFoundException {
        try (java.io.InputStream in = BootstrapVisibilityTest.class.getClassLoader()
            .getResourceAsStream(name.replace('.', '/') + ".class")) {
          if (in == null) {
            throw new ClassNotFoundException(name);
          }
          byte[] b = in.readAllBytes();
          return defineClass(name, b, 0, b.length);
        } catch (java.io.IOException e) {
          throw new ClassNotFoundException(name, e);
        }
      }
    };
    assertThat(BootstrapVisibility.problem(copying, Fencing.class))
        .isEqualTo("resolves dev.fencing.agent.bootstrap.Fencing to a copy of its own");
  }

  @Test
  void aLoaderDelegatingOnlyPartOfThePackageFailsOnTheFirstClassItHides() {
    ClassLoader partial = new ClassLoader("partial", getClass().getClassLoader()) {
      @Override
      protected Class<?> loadClass(String name, boolean resolve) throws ClassNotFoundException {
        if (name.startsWith("dev.fencing.agent.bootstrap.") && !name.equals(Fencing.class.getName())) {
          throw new ClassNotFoundException(name);
        }
        return super.loadClass(name, resolve);
      }
    };
    assertThat(BootstrapVisibility.problem(partial, Fencing.class, JdbcHook.class, FencingBlockedException.class))
        .startsWith("cannot see the agent's bootstrap classes (dev.fencing.agent.bootstrap.JdbcHook: ");
    assertThat(new BootstrapVisibility(Fencing.class, JdbcHook.class).sees(partial)).isFalse();
    assertThat(new BootstrapVisibility(Fencing.class, JdbcHook.class).sees(getClass().getClassLoader())).isTrue();
  }
}
