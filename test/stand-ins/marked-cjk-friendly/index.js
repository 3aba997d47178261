// pi-tui passes this to marked.use(): an emStrong tokenizer that returns false hands **bold** back to marked's own
// (an extension with no tokenizer at all makes pi-tui's Markdown throw on bold text).
export default function markedCjkFriendly() {
  return {
    tokenizer: {
      emStrong() {
        return false;
      },
    },
  };
}
