package mediagen

// FeatureVoiceClone is the pricing key of voice cloning. It is priced like a
// feature but is not one: clones are made with client.CloneVoice, and the
// service refuses it as a generation's feature.
const FeatureVoiceClone Feature = "audio/voice-clone"
