//===- CudaPlanCheck.cpp - static checks of a CUDA launch plan ------------===//
//
// Part of the gpuopt project.
//
//===----------------------------------------------------------------------===//
//
// checkCudaPlan (CudaModel.h): the data flow of a read plan, before any
// driver call or emulated launch. The arena is tracked byte-exactly as a map
// of disjoint intervals, each holding the buffer through which it was last
// written and by what (the weights file, the inputs, or a step): arena space
// is shared by liveness, so a read must find its own buffer's bytes, not
// merely written ones. Each argument a kernel reads or writes (the plan's
// KernelArg.reads/.writes) is taken to be read or written whole: what a
// kernel does to part of an argument is invisible here (the emulator's NaN
// fill shows a read of an unwritten part). A Library step writes the buffer
// of its operand 0 and reads those of the others (each whole, as above); its
// output view must not overlap any of its input views.
//
//===----------------------------------------------------------------------===//

#include "gpuopt/Runtime/CudaModel.h"

#include <algorithm>
#include <map>

using namespace gpuopt::runtime;

namespace {

/// What last wrote a range of the arena: a step of `plan` ("init", "run"),
/// or, with `plan` null, the loader (the weights file or the inputs).
struct Writer {
  unsigned buffer = 0;
  const char *plan = nullptr;
  size_t step = 0;
};

/// The arena's written bytes as disjoint intervals [begin, end).
class ArenaState {
public:
  /// Marks [begin, end) as written by `w`.
  void write(uint64_t begin, uint64_t end, const Writer &w) {
    if (begin >= end)
      return;
    auto it = map.lower_bound(begin);
    if (it != map.begin()) {
      auto prev = std::prev(it);
      if (prev->second.end > begin) {
        Interval old = prev->second;
        prev->second.end = begin; // prev starts before `begin`
        if (old.end > end)
          map.emplace(end, Interval{old.end, old.writer});
      }
    }
    while (it != map.end() && it->first < end) {
      if (it->second.end > end) {
        Interval rest{it->second.end, it->second.writer};
        map.erase(it);
        map.emplace(end, rest);
        break;
      }
      it = map.erase(it);
    }
    map.emplace(begin, Interval{end, w});
  }

  /// The pieces of [begin, end) in order: `f(from, to, writer)`, writer null
  /// for bytes never written. Stops when `f` returns false.
  template <typename F> void visit(uint64_t begin, uint64_t end, F f) const {
    uint64_t at = begin;
    auto it = map.upper_bound(begin);
    if (it != map.begin() && std::prev(it)->second.end > begin)
      --it;
    for (; it != map.end() && it->first < end; ++it) {
      uint64_t from = std::max(it->first, begin);
      uint64_t to = std::min(it->second.end, end);
      if (from > at && !f(at, from, nullptr))
        return;
      if (!f(from, to, &it->second.writer))
        return;
      at = to;
    }
    if (at < end)
      f(at, end, nullptr);
  }

  /// Forgets every interval whose writer fails `keep`.
  template <typename P> void retain(P keep) {
    for (auto it = map.begin(); it != map.end();)
      it = keep(it->second.writer) ? std::next(it) : map.erase(it);
  }

private:
  struct Interval {
    uint64_t end;
    Writer writer;
  };
  std::map<uint64_t, Interval> map;
};

/// The first piece of [begin, end) that fails `good` (called with the
/// piece's writer, null for bytes never written), merged with the pieces
/// right after it that fail in the same way (never written, or last written
/// through the same buffer).
struct BadRange {
  bool found = false;
  uint64_t from = 0, to = 0;
  bool written = false;
  Writer writer;
};

template <typename G>
BadRange findBad(const ArenaState &state, uint64_t begin, uint64_t end,
                 G good) {
  BadRange bad;
  state.visit(begin, end, [&](uint64_t from, uint64_t to, const Writer *w) {
    if (!bad.found) {
      if (good(w))
        return true;
      bad = {true, from, to, w != nullptr, w ? *w : Writer()};
      return true;
    }
    bool same = from == bad.to && (w != nullptr) == bad.written &&
                (!w || w->buffer == bad.writer.buffer) && !good(w);
    if (same)
      bad.to = to;
    return same;
  });
  return bad;
}

class PlanChecker {
public:
  PlanChecker(const CudaArtifact &art, const std::string &path)
      : art(art), path(path) {}

  Status run() {
    for (unsigned id = 0; id < art.buffers.size(); ++id)
      if (art.buffers[id].kind == "param")
        state.write(begin(id), end(id), Writer{id, nullptr, 0});
    if (Status s = walk("init", art.init); !s)
      return s;
    // What persists from load to every forward: the params and constants.
    state.retain([&](const Writer &w) {
      const std::string &kind = art.buffers[w.buffer].kind;
      return kind == "param" || kind == "constant";
    });
    for (unsigned id : art.inputs) {
      BadRange bad = findBad(state, begin(id), end(id),
                             [](const Writer *w) { return !w; });
      if (bad.found)
        return fail("run: " + what(id) + " overlaps arena bytes " + range(bad) +
                    " of " + what(bad.writer.buffer));
      state.write(begin(id), end(id), Writer{id, nullptr, 0});
    }
    if (Status s = walk("run", art.run); !s)
      return s;
    for (unsigned id : art.outputs) {
      BadRange bad = findBad(state, begin(id), end(id), [&](const Writer *w) {
        return w && w->buffer == id;
      });
      if (bad.found)
        return fail("run: " + what(id) +
                    " does not hold what the forward wrote through it at its "
                    "end: arena bytes " +
                    range(bad) + cause(bad));
    }
    return Status::ok();
  }

private:
  const CudaArtifact &art;
  const std::string &path;
  ArenaState state;

  uint64_t begin(unsigned id) const { return art.buffers[id].offset; }
  uint64_t end(unsigned id) const {
    return art.buffers[id].offset + art.buffers[id].bytes;
  }

  Status fail(const std::string &what) const {
    return Status::error(path + ": invalid CUDA artifact: " + what);
  }

  static std::string range(const BadRange &bad) {
    return "[" + std::to_string(bad.from) + ", " + std::to_string(bad.to) + ")";
  }

  std::string what(unsigned id) const { return describeCudaBuffer(art, id); }

  /// ": never written" or " last written through X by Y".
  std::string cause(const BadRange &bad) const {
    if (!bad.written)
      return " hold nothing written before";
    const Writer &w = bad.writer;
    std::string by;
    if (!w.plan)
      by = art.buffers[w.buffer].kind == "param" ? "the weights file"
                                                 : "the inputs";
    else
      by = describeCudaStep(art, w.plan, w.step);
    return " were last written through " + what(w.buffer) + " by " + by;
  }

  /// The arena bytes [begin, end) a Library step's operand spans (from its
  /// first to its last element; the reader checked it inside its buffer).
  std::pair<uint64_t, uint64_t> span(const CudaOperand &o) const {
    const CudaBuffer &b = art.buffers[o.buffer];
    uint64_t size = dtypeSize(b.dtype);
    uint64_t last = uint64_t(o.offset);
    for (size_t d = 0; d < o.sizes.size(); ++d)
      last += uint64_t(o.sizes[d] - 1) * uint64_t(o.strides[d]);
    return {b.offset + uint64_t(o.offset) * size, b.offset + (last + 1) * size};
  }

  /// A Library step's output view overlapping one of its input views: the
  /// libraries read and write them concurrently.
  Status checkLibraryViews(const char *plan, size_t i,
                           const CudaStep &step) const {
    const CudaOperand &out = step.operands[0];
    auto [ob, oe] = span(out);
    for (size_t o = 1; o < step.operands.size(); ++o) {
      const CudaOperand &in = step.operands[o];
      if (in.empty())
        continue;
      auto [ib, ie] = span(in);
      uint64_t from = std::max(ob, ib), to = std::min(oe, ie);
      if (from < to)
        return fail(describeCudaStep(art, plan, i) +
                    ": operand 0 (the output, a view of " + what(out.buffer) +
                    ") overlaps operand " + std::to_string(o) + " (a view of " +
                    what(in.buffer) + ") at arena bytes [" +
                    std::to_string(from) + ", " + std::to_string(to) + ")");
    }
    return Status::ok();
  }

  Status walk(const char *plan, const std::vector<CudaStep> &steps) {
    bool forward = plan[0] == 'r';
    for (size_t i = 0; i < steps.size(); ++i) {
      const CudaStep &step = steps[i];
      // What the step does to each argument: a kernel's signature says; a
      // Library step writes operand 0's buffer and reads the others'.
      std::vector<CudaKernelArg> access;
      if (step.isLibrary) {
        if (Status s = checkLibraryViews(plan, i, step); !s)
          return s;
        for (unsigned id : step.args) {
          CudaKernelArg a;
          a.writes = id == step.operands[0].buffer;
          for (size_t o = 1; o < step.operands.size(); ++o)
            a.reads |=
                !step.operands[o].empty() && step.operands[o].buffer == id;
          a.inPlace = a.reads && a.writes;
          access.push_back(a);
        }
      } else {
        access = art.kernels[step.kernel].args;
      }
      auto bad = [&](size_t a, const std::string &why) {
        return fail(describeCudaStep(art, plan, i) + ": argument " +
                    std::to_string(a) + " " + why);
      };
      // A written argument shares no byte with another argument.
      for (size_t a = 0; a < step.args.size(); ++a) {
        if (!access[a].writes)
          continue;
        unsigned id = step.args[a];
        for (size_t o = 0; o < step.args.size(); ++o) {
          unsigned other = step.args[o];
          uint64_t from = std::max(begin(id), begin(other));
          uint64_t to = std::min(end(id), end(other));
          if (o == a || from >= to)
            continue;
          if (other == id) {
            if (access[a].inPlace && access[o].inPlace)
              continue;
            return bad(a, "writes " + what(id) + ", which is also argument " +
                              std::to_string(o) +
                              " of the launch (not both in place)");
          }
          return bad(a, "writes " + what(id) + ", which overlaps argument " +
                            std::to_string(o) + ", " + what(other) +
                            ", at arena bytes [" + std::to_string(from) + ", " +
                            std::to_string(to) + ")");
        }
      }
      for (size_t a = 0; a < step.args.size(); ++a) {
        if (!access[a].reads)
          continue;
        unsigned id = step.args[a];
        BadRange r = findBad(state, begin(id), end(id), [&](const Writer *w) {
          return w && w->buffer == id;
        });
        if (r.found)
          return bad(a, "reads " + what(id) +
                            (r.written ? ", but its bytes were reused: "
                                       : " before it is written: ") +
                            "arena bytes " + range(r) + cause(r));
      }
      for (size_t a = 0; a < step.args.size(); ++a) {
        if (!access[a].writes)
          continue;
        unsigned id = step.args[a];
        const std::string &kind = art.buffers[id].kind;
        if (kind == "param")
          return bad(a, "writes " + what(id) +
                            ": parameters are read-only (the weights file "
                            "writes them at load)");
        if (kind == "input")
          return bad(a, "writes " + what(id) +
                            ": inputs are read-only (every forward reads "
                            "them as given)");
        if (forward && kind == "constant")
          return bad(a, "writes " + what(id) +
                            ": constants are written at load (init) only, "
                            "every forward reads them");
        // Nor the bytes of a buffer that must keep its contents.
        BadRange r = findBad(state, begin(id), end(id), [&](const Writer *w) {
          if (!w || w->buffer == id)
            return true;
          const std::string &owner = art.buffers[w->buffer].kind;
          return !(owner == "param" || owner == "input" ||
                   (forward && owner == "constant"));
        });
        if (r.found)
          return bad(a, "writes " + what(id) + " over arena bytes " + range(r) +
                            " of " + what(r.writer.buffer));
      }
      for (size_t a = 0; a < step.args.size(); ++a)
        if (access[a].writes)
          state.write(begin(step.args[a]), end(step.args[a]),
                      Writer{step.args[a], plan, i});
    }
    return Status::ok();
  }
};

} // namespace

Status gpuopt::runtime::checkCudaPlan(const CudaArtifact &art,
                                      const std::string &path) {
  return PlanChecker(art, path).run();
}
